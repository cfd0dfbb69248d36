"""Writes bench/secrets_cases.jsonl: the secret detector's test set, regenerated identically from a fixed seed.

    .venv/bin/python bench/secrets_cases.py            # rewrites bench/secrets_cases.jsonl

Positives: for every kind memory/secrets/detect.py names, at least 20 secrets built from the provider's documented
token format (prefix, length, alphabet) with seeded random bodies, each in a sentence someone might write.
Near misses: strings a careless detector refuses (UUIDs, SHA-1 and SHA-256 hashes, git commit ids, base64
image fragments, phone numbers, ISBNs, order and tracking numbers, Luhn-valid numbers without a card
network's IIN, IMEIs, bare token prefixes, sentences about passwords that give none). Each line is
{"text": ..., "kind": <the kind's name, or null for a near miss>}. The kind names are written out here, not
imported, so the benchmark checks the detector against what this file says, not against itself.

Hidden, at the end (drawn after the rest, so the lines above never change): keys with a zero-width space,
a soft hyphen or another format character inside, in fullwidth letters, with Cyrillic or Greek look-alikes,
base64-encoded alone or in a sentence; a key split between an item's text and its title, a card number and a
PIN sent as floats ({"item": ..., "kind": ...} lines, read whole as memory_add reads an item); and their near
misses (Russian and Greek sentences, soft hyphens and joiners in words, base64 of plain text, floats that are
prices and coordinates).
"""

import base64
import json
import random
import string
from pathlib import Path

SEED = 20261130
PER_KIND = 24  # at least 20 per kind, as the issue asks
PER_OWN_RULE = 60  # more for our own rules (passwords, cards): many phrasings and formats, so more to get wrong
OUT = Path(__file__).resolve().parent / "secrets_cases.jsonl"

UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"

rng = random.Random(SEED)


def pick(alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def luhn_complete(body: str) -> str:
    """body + the check digit that makes it Luhn-valid."""
    total = 0
    for place, digit in enumerate(reversed(body)):
        value = int(digit) * (1 if place % 2 else 2)
        total += value - 9 if value > 9 else value
    return body + str((10 - total % 10) % 10)


def luhn_number(prefix: str, length: int) -> str:
    return luhn_complete(prefix + pick(string.digits, length - len(prefix) - 1))


SENTENCES = (
    "here's the key {s} for the staging bucket",
    "Can you remember this for me: {s}",
    "I put {s} in the deploy config last night, don't lose it",
    "note to self - prod credential is {s}",
    "{s}",
    "ok so the new one is {s} (the old one was revoked)",
    "Paste this into the CI settings: {s}",
    "Marco sent me {s} on Slack, saving it here",
    "export TOKEN={s}",
    "config:\n  credential: {s}\n  region: eu-west-1",
)


def sentence(secret: str) -> str:
    return rng.choice(SENTENCES).format(s=secret)


def aws() -> str:
    if rng.random() < 0.75:  # an access key id: AKIA (long-term) or ASIA (temporary) + 16 of A-Z0-9
        return sentence(rng.choice(("AKIA", "ASIA", "ABIA", "ACCA")) + pick(UPPER_DIGITS, 16))
    secret = pick(ALNUM + "/+", 40)  # a secret access key, as the AWS CLI config writes it
    return f'aws_secret_access_key = "{secret}" is what the old laptop had'


def azure() -> str:
    key = base64.b64encode(rng.randbytes(64)).decode()  # 88 characters
    account = pick(string.ascii_lowercase, 10)
    return sentence(
        f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};EndpointSuffix=core.windows.net"
    )


def cloudant() -> str:
    account = pick(string.ascii_lowercase, 8) + "-bluemix"
    if rng.random() < 0.5:
        return sentence(f"https://{account}:{pick(HEX, 64)}@{account}.cloudant.com")
    return f"cloudant_password='{pick(HEX, 64)}' for the {account} account"


def discord() -> str:
    user_id = str(rng.randint(10**17, 10**18 - 1))  # 18-digit snowflake, base64: 24 chars from M, N or O
    token = f"{base64.b64encode(user_id.encode()).decode()}.{pick(URLSAFE, 6)}.{pick(URLSAFE, 27)}"
    return f"the discord bot token is {token}, keep it out of git"


def github() -> str:
    return sentence(rng.choice(("ghp_", "gho_", "ghu_", "ghs_", "ghr_")) + pick(ALNUM, 36))


def gitlab() -> str:
    return sentence(rng.choice(("glpat-", "glpat-", "gldt-", "glrt-")) + pick(URLSAFE, 20))


def ibm_cos() -> str:
    return f"cos_hmac_keys secret_access_key: {pick(HEX, 48)} (bucket photos-{rng.randint(1, 99)})"


def jwt() -> str:
    header = b64url(json.dumps({"alg": rng.choice(("HS256", "RS256")), "typ": "JWT"}).encode())
    claims = {
        "sub": str(rng.randint(1000, 999999)),
        "name": rng.choice(("Ana", "Bo", "Chen")),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
    }
    return sentence(f"{header}.{b64url(json.dumps(claims).encode())}.{b64url(rng.randbytes(32))}")


def mailchimp() -> str:
    return sentence(f"{pick(HEX, 32)}-us{rng.randint(1, 21)}")


def npm() -> str:
    return f"my .npmrc says //registry.npmjs.org/:_authToken=npm_{pick(ALNUM, 36)}"


def openai() -> str:
    prefix = rng.choice(("sk-", "sk-proj-"))
    return sentence(f"{prefix}{pick(ALNUM, 20)}T3BlbkFJ{pick(ALNUM, 20)}")


def private_key() -> str:
    kind = rng.choice(("RSA ", "EC ", "OPENSSH ", "DSA ", ""))
    body = "\n".join(base64.b64encode(rng.randbytes(48)).decode() for _ in range(3))
    return f"server key:\n-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def pypi() -> str:
    return sentence("pypi-AgEIcHlwaS5vcmc" + pick(URLSAFE, rng.randint(70, 160)))


def sendgrid() -> str:
    return sentence(f"SG.{pick(URLSAFE, 22)}.{pick(URLSAFE, 43)}")


def slack() -> str:
    if rng.random() < 0.5:
        team, user = rng.randint(10**9, 10**13), rng.randint(10**9, 10**13)
        return sentence(f"{rng.choice(('xoxb', 'xoxp', 'xoxa'))}-{team}-{user}-{pick(LOWER_DIGITS, 24)}")
    return sentence(
        f"https://hooks.slack.com/services/T{pick(UPPER_DIGITS, 8)}/B{pick(UPPER_DIGITS, 10)}/{pick(ALNUM, 24)}"
    )


def softlayer() -> str:
    key = pick(LOWER_DIGITS, 64)
    if rng.random() < 0.5:
        return f"softlayer_api_key = {key} for the old datacenter"
    return f"call https://api.softlayer.com/soap/v3/{key}/SoftLayer_Account"


def square() -> str:
    return sentence("sq0csp-" + pick(URLSAFE, 43))


def stripe() -> str:
    return sentence(rng.choice(("sk_live_", "rk_live_")) + pick(ALNUM, rng.choice((24, 34, 99))))


def telegram() -> str:
    return f"bot token from BotFather: {rng.randint(10**8, 10**10 - 1)}:AA{pick(URLSAFE, 33)}"


def twilio() -> str:
    return sentence(rng.choice(("AC", "SK")) + pick(HEX, 32))


def artifactory() -> str:
    if rng.random() < 0.5:
        return f"artifactory api key AKCp8{pick(ALNUM, 68)} for the release repo"
    return f"artifactory password AP{rng.choice('0123456789ABCDEF')}{pick(ALNUM, 20)} for jenkins"


def ibm_iam() -> str:
    label = rng.choice(("IBMCLOUD_API_KEY=", "ibm_cloud_iam_api_key: ", "iam_apikey = "))
    return f"{label}{pick(URLSAFE, 44)} is the service id's key"


def basic_auth() -> str:
    user, password = pick(string.ascii_lowercase, 6), pick(ALNUM + "!$", 12)
    url = rng.choice(
        (
            f"https://{user}:{password}@git.example.com/team/repo.git",
            f"postgres://{user}:{password}@db.internal:5432/app",
            f"ftp://{user}:{password}@files.example.org/backup/",
        )
    )
    return sentence(url)


def password() -> str:
    value = rng.choice(
        (
            pick(ALNUM, rng.randint(8, 14)),
            pick(string.ascii_lowercase, 6) + str(rng.randint(1, 999)),
            rng.choice(("Summer", "Tiger", "Falcon", "Maple")) + str(rng.randint(1980, 2030)) + rng.choice("!#$%"),
            pick(ALNUM + "!#$%&*", 12),
            rng.choice(("bluebird", "marmalade", "otterpond", "sunflower", "gingerbread")),  # a plain word
        )
    )
    pin = str(rng.randint(1000, 999999))
    return rng.choice(
        (
            f"my password is {value}",
            f"Password: {value}",
            f"the wifi password is {value} if anyone asks",
            f"login for the router -> admin / password={value}",
            f"The PIN for the door is {pin[:4]}",
            f"my bank card PIN is {pin[:4]}, never tell anyone",
            f"passcode to the gate is now {pin}",
            f'{{"user": "ana", "password": "{value}"}}',
            f"DB_PASSWORD={value}",
            f"the password for the NAS: {value}",
            f"wifi password {value}",
            f"my passphrase was {value} before I changed it",
            f"use PIN {pin[:4]} at the garage",
            f"login details\nuser: ana\npassword:\n{value}",
        )
    )


NETWORKS = (  # IIN prefix, length, grouping
    ("4", 16, (4, 4, 4, 4)),
    ("4", 13, (4, 4, 5)),
    ("51", 16, (4, 4, 4, 4)),
    ("55", 16, (4, 4, 4, 4)),
    ("2221", 16, (4, 4, 4, 4)),
    ("2720", 16, (4, 4, 4, 4)),
    ("34", 15, (4, 6, 5)),
    ("37", 15, (4, 6, 5)),
    ("6011", 16, (4, 4, 4, 4)),
    ("65", 16, (4, 4, 4, 4)),
    ("3530", 16, (4, 4, 4, 4)),
    ("36", 14, (4, 6, 4)),
    ("62", 16, (4, 4, 4, 4)),
    ("6759", 16, (4, 4, 4, 4)),
    ("2200", 16, (4, 4, 4, 4)),
    ("4", 19, (4, 4, 4, 4, 3)),
)


def grouped(number: str, groups, separator: str) -> str:
    parts, at = [], 0
    for size in groups:
        parts.append(number[at : at + size])
        at += size
    return separator.join(parts)


def card() -> str:
    prefix, length, groups = rng.choice(NETWORKS)
    shown = grouped(luhn_number(prefix, length), groups, rng.choice((" ", "-", "")))
    return rng.choice(
        (
            f"card number {shown} exp 09/28",
            f"Use my card {shown} for the hotel",
            f"{shown}",
            f"paid with {shown}, cvv on the back",
            f"the company card is {shown} 12/27",
        )
    )


POSITIVES = {
    "AWS Access Key": aws,
    "Azure Storage Account access key": azure,
    "Cloudant Credentials": cloudant,
    "Discord Bot Token": discord,
    "GitHub Token": github,
    "GitLab Token": gitlab,
    "IBM COS HMAC Credentials": ibm_cos,
    "JSON Web Token": jwt,
    "Mailchimp Access Key": mailchimp,
    "NPM tokens": npm,
    "OpenAI Token": openai,
    "Private Key": private_key,
    "PyPI Token": pypi,
    "SendGrid API Key": sendgrid,
    "Slack Token": slack,
    "SoftLayer Credentials": softlayer,
    "Square OAuth Secret": square,
    "Stripe Access Key": stripe,
    "Telegram Bot Token": telegram,
    "Twilio API Key": twilio,
    "Artifactory Credentials": artifactory,
    "IBM Cloud IAM Key": ibm_iam,
    "Basic Auth Credentials": basic_auth,
    "Password": password,
    "Payment card number": card,
}


def uuid_case() -> str:
    value = "-".join(pick(HEX, size) for size in (8, 4, 4, 4, 12))
    return rng.choice((f"session id {value}", f"the request {value} failed twice", f'{{"trace": "{value}"}}'))


def sha1_case() -> str:
    return rng.choice(
        (
            f"fixed in commit {pick(HEX, 40)}",
            f"git checkout {pick(HEX, 7)} and rebuild",
            f"sha1 {pick(HEX, 40)} matches the release",
            f"Merge {pick(HEX, 40)} into main",
        )
    )


def sha256_case() -> str:
    return rng.choice(
        (f"sha256:{pick(HEX, 64)}", f"the checksum is {pick(HEX, 64)}", f"image digest sha256 {pick(HEX, 64)} pulled")
    )


def image_case() -> str:
    return f"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{base64.b64encode(rng.randbytes(240)).decode()}"


def phone_case() -> str:
    def digits(n: int) -> str:
        return pick(string.digits, n)

    return rng.choice(
        (
            f"call me at +1 (415) 555-{digits(4)}",
            f"my UK number is +44 20 {digits(4)} {digits(4)}",
            f"her mobile: +86 138 {digits(4)} {digits(4)}",
            f"office 0033 1 {digits(2)} {digits(2)} {digits(2)} 00",
            f"WhatsApp +91 {digits(5)} {digits(5)}",
            f"+49 30 {digits(6)}",
            f"phone 1-800-{digits(3)}-{digits(4)}",
        )
    )


def isbn_case() -> str:
    body = "978" + pick(string.digits, 9)
    check = (10 - sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(body)) % 10) % 10
    return rng.choice(
        (
            f"ISBN {body[:3]}-{body[3]}-{body[4:7]}-{body[7:12]}-{check}",
            f"the book's ISBN-13 is {body}{check}",
            f"isbn: {body}{check}",
        )
    )


def order_case() -> str:
    return rng.choice(
        (
            f"order #{pick(string.digits, 3)}-{pick(string.digits, 7)}-{pick(string.digits, 7)} arrived",
            f"UPS tracking 1Z{pick(UPPER_DIGITS, 16)}",
            f"FedEx {pick(string.digits, 4)} {pick(string.digits, 4)} {pick(string.digits, 4)}",
            f"USPS 9400 1{pick(string.digits, 3)} {pick(string.digits, 4)} "
            f"{pick(string.digits, 4)} {pick(string.digits, 4)} {pick(string.digits, 2)}",
            f"invoice INV-{pick(string.digits, 10)}",
            f"ticket {pick(string.digits, 12)} booked",
        )
    )


def luhn_without_iin_case() -> str:
    number = luhn_number(rng.choice("01789"), rng.randint(13, 19))
    shown = " ".join(number[i : i + 4] for i in range(0, len(number), 4)) if rng.random() < 0.5 else number
    return rng.choice((f"member number {shown}", f"account {shown} is closed", f"loyalty card {shown}"))


def card_like_case() -> str:
    prefix, length, groups = rng.choice(NETWORKS)
    number = luhn_number(prefix, length)
    if rng.random() < 0.5:  # a wrong check digit
        number = number[:-1] + str((int(number[-1]) + rng.randint(1, 9)) % 10)
    else:  # a card network's IIN at a length that network never issues
        number = luhn_number(rng.choice(("34", "37", "51", "55")), rng.choice((14, 17, 18)))
    return rng.choice((f"reference {grouped(number, groups, ' ')}", f"number {number} from the form"))


def imei_case() -> str:
    number = luhn_number(rng.choice(("35", "86", "01", "99")), 15)
    return rng.choice((f"IMEI {number}", f"phone IMEI {number[:2]}-{number[2:8]}-{number[8:14]}-{number[14]}"))


NEAR_MISS_FIXED = (
    # sentences about passwords and PINs that give none
    "I forgot my password again",
    "I use a password manager, 1Password is great",
    "the password manager is 1Password",
    "we had to reset the password yesterday",
    "my password is weak, I should change it",
    "the password isn't working",
    "the password's changed",
    "Password policy: at least 12 characters",
    "what's the wifi password?",
    "the password is on a sticky note",
    "my password is the same as my PIN",
    "password-protected PDF attached",
    "changed my password last week",
    "Your password must be 8 characters or more",
    "the password field was empty",
    "he guessed the password",
    "passwords are stored hashed with argon2",
    "the password is case sensitive",
    "password reset link expired",
    "I never share passwords",
    "the passcode screen keeps popping up",
    "password hint: my first dog",
    "Enter your password to continue",
    "my passphrase is long and silly",
    "the PIN pad at the store was broken",
    "pin it to the board",
    "bowling pins everywhere",
    "she wore a pin on her jacket",
    "drop a pin at the cafe",
    "connect pin 13 to ground",
    "my PIN is stuck in my head",
    "I pinned the message",
    "password: ********",
    "password: $DB_PASSWORD",
    "password={password}",
    "password: [redacted: Password]",
    "my password was accepted this time",
    "her password is her dog's name",
    "the password is ok now",
    "password: none",
    "password: N/A",
    "I changed the password to something stronger",
    "postgres://user:password@localhost:5432/app",
    "git clone https://ana:$GITHUB_TOKEN@github.com/org/repo.git",
    # token prefixes and formats named, no token given
    "GitHub classic tokens start with ghp_ and hold 36 more characters",
    "Slack bot tokens look like xoxb-...",
    "AWS key ids begin with AKIA",
    "Stripe live keys begin with sk_live_",
    "a JWT starts with eyJ",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTES\n"
    "-----END CERTIFICATE-----",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA2v4cMnzM9hrGuwB4 ana@laptop",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc is Stripe's documented test key",
    # addresses, versions, dates, numbers
    "the server is at 203.0.113.7",
    "upgraded to version 1.24.3",
    "meeting at 2024-05-08T13:56:00Z",
    "MAC 00:1A:2B:3C:4D:5E",
    "the color is #1a2b3c",
    "https://example.com/docs?page=2&sort=asc",
    "mail me at ana.silva@example.com",
    "I ran 5 10 15 20 25 30 km this month",
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
    "years: 2019 2020 2021 2022 2023",
    "pi is 3.14159265358979323846",
    "the population grew from 1,234,567 to 2,345,678",
    "IBAN GB82 WEST 1234 5698 7654 32",
    "card ending in 4242",
    "timestamp 1714651234567 in ms",
    "call at 10:30:00 tomorrow",
    "chmod 755 deploy.sh && ./deploy.sh",
    "https://github.com/ana/memory-notes/blob/main/README.md",
    "ticket JIRA-48213 moved to done",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Thanks! I painted that lake sunrise last year, it's special to me.",
    "the keynote was great, the key takeaway: ship smaller",
    "token ring networks are obsolete",
    "cloud costs went down",
    "slack off a bit this weekend",
    "the AP exam is on Monday",
)

NEAR_MISSES = (
    (uuid_case, 15),
    (sha1_case, 15),
    (sha256_case, 15),
    (image_case, 10),
    (phone_case, 15),
    (isbn_case, 10),
    (order_case, 12),
    (luhn_without_iin_case, 15),
    (card_like_case, 15),
    (imei_case, 10),
)


HIDDEN_PER_WAY = 12  # cases for each way of hiding a key
FORMAT_CHARACTERS = ("\u200b", "\u00ad", "\u200c", "\u200d", "\u2060", "\ufeff")
LOOK_ALIKES = {"A": "\u0410", "B": "\u0392", "C": "\u0421", "E": "\u0415", "K": "\u041a", "o": "\u03bf", "p": "\u0440"}
BARE_KEYS = {
    "AWS Access Key": lambda: rng.choice(("AKIA", "ASIA")) + pick(UPPER_DIGITS, 16),
    "GitHub Token": lambda: "ghp_" + pick(ALNUM, 36),
    "Stripe Access Key": lambda: "sk_live_" + pick(ALNUM, 24),
    "GitLab Token": lambda: "glpat-" + pick(URLSAFE, 20),
    "OpenAI Token": lambda: f"sk-{pick(ALNUM, 20)}T3BlbkFJ{pick(ALNUM, 20)}",
}


def hidden_key() -> tuple[str, str]:
    kind = rng.choice(list(BARE_KEYS))
    return kind, BARE_KEYS[kind]()


def with_format_character(key: str) -> str:
    at = rng.randint(4, len(key) - 2)
    return key[:at] + rng.choice(FORMAT_CHARACTERS) + key[at:]


def fullwidth(key: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key)


def looking_alike(key: str) -> str:
    places = [i for i, c in enumerate(key) if c in LOOK_ALIKES] or [0]
    at = rng.choice(places)
    return key[:at] + LOOK_ALIKES.get(key[at], key[at]) + key[at + 1 :]


def base64_encoded(key: str) -> str:
    if rng.random() < 0.5:
        return base64.b64encode(key.encode()).decode()
    return base64.urlsafe_b64encode(f"the deploy key is {key}, keep it safe".encode()).decode()


def split_item(key: str) -> dict:
    at = rng.randint(4, len(key) - 4)
    if rng.random() < 0.5:
        return {"text": f"the new key is {key[:at]}", "title": key[at:]}
    return {"title": f"key {key[:at]}", "text": key[at:] + " is what the CI uses"}


def float_card() -> dict:
    prefix, length, _ = rng.choice([network for network in NETWORKS if network[1] == 16 and network[0] < "9"])
    number = luhn_number(prefix, length)
    if rng.random() < 0.5:
        return {
            "item": {"text": "paid for the hotel", "metadata": {"card": float(number)}},
            "kind": "Payment card number",
        }
    return {"text": f"card {number[0]}.{number[1:]}e15 exp 09/28", "kind": "Payment card number"}


def float_pin() -> dict:
    key = rng.choice(("door_pin", "gate_pin", "alarm_passcode", "bank_pin"))
    return {"item": {"text": "house notes", "metadata": {key: float(rng.randint(1000, 999999))}}, "kind": "Password"}


HIDING_WAYS = (with_format_character, fullwidth, looking_alike, base64_encoded)
HIDDEN_NEAR_MISSES = (
    {"text": "Встреча с Олегом в пятницу в 10:00, адрес: ул. Ленина 5"},
    {"text": "Купил iPhone 15 Pro за 1000 евро, чек в почте oleg@mail.ru"},
    {"text": "Καλημέρα! Τα λέμε αύριο στις 5 στο AKTIO café"},
    {"text": "ΑΘΗΝΑ 2004: the opening ceremony was on 13 August"},
    {"text": "СССР 1980 OLYMPICS poster, framed, 40x60"},
    {"text": "the infor\u00admation desk opens at 9, the pro\u00adgramme at 10"},
    {"text": "coding all night 👩\u200d💻 then coffee ☕\ufe0f"},
    {"text": "ＴＯＫＹＯ２０２０ was moved to 2021"},
    {"text": base64.b64encode(b"see you at the cafe at 5pm, bring the map").decode()},
    {"text": "aGVsbG8gd29ybGQsIGhvdyBhcmUgeW91IHRvZGF5Pw== is base64 for a greeting"},
    {"text": "the score went from 1234.0 to 1300.5 and version 2.0 shipped"},
    {"text": "a run of 1.5e3 metres, then 4.2e1 more"},
    {"item": {"text": "hotel", "metadata": {"price": 1234.0, "nights": 3.0, "lat": 38.7223, "lon": -9.1393}}},
    {"item": {"text": "my card is the blue one", "title": "4111 notes"}},
    {"item": {"text": "the key is in the drawer", "title": "AKIA stands for access key id"}},
    {"item": {"text": "card number 4111 1111", "about": "1111 1112 is not a card"}},
)


def hidden() -> list[dict]:
    """Keys hidden every way the gate reads through, then what those ways must not turn into a secret."""
    rows: list[dict] = []
    for hide in HIDING_WAYS:
        for _ in range(HIDDEN_PER_WAY):
            kind, key = hidden_key()
            rows.append({"text": rng.choice(SENTENCES).format(s=hide(key)), "kind": kind})
    for _ in range(HIDDEN_PER_WAY):
        kind, key = hidden_key()
        rows.append({"item": split_item(key), "kind": kind})
    rows += [float_card() for _ in range(HIDDEN_PER_WAY)] + [float_pin() for _ in range(HIDDEN_PER_WAY)]
    return rows + [{**case, "kind": None} for case in HIDDEN_NEAR_MISSES]


def cases() -> list[dict]:
    """Every case, positives kind by kind, then near misses; the same list on every run."""
    rows: list[dict[str, str | None]] = [
        {"text": make(), "kind": kind}
        for kind, make in POSITIVES.items()
        for _ in range(PER_OWN_RULE if kind in ("Password", "Payment card number") else PER_KIND)
    ]
    rows += [{"text": make(), "kind": None} for make, count in NEAR_MISSES for _ in range(count)]
    rows += [{"text": text, "kind": None} for text in NEAR_MISS_FIXED]
    return rows + hidden()


if __name__ == "__main__":
    rows = cases()
    with OUT.open("w") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    near = sum(1 for row in rows if row["kind"] is None)
    print(f"{len(rows)} cases: {len(rows) - near} positives over {len(POSITIVES)} kinds, {near} near misses -> {OUT}")
