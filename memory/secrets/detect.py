"""Finds credentials pasted into an item: a provider's key or token, a password given as such, a card number.

`find_secret(text)` names the kind of the first secret in a string; `scan_item(item)` also says which field
holds it. Neither ever returns, raises or logs the secret itself, so a caller can put the answer in a refusal.

Detectors run in the order of DETECTORS (provider formats first, generic rules last, so a Cloudant URL is
called Cloudant, not basic auth); the first that finds anything names the kind. Most are the regex plugins of
`detect-secrets`, instantiated once here and called through `analyze_string` only, which reads nothing but
the plugin's compiled patterns and so is safe under threads (`scan_line` and the settings API rewrite
process-wide settings on every call). Left out: the entropy plugins (through `scan_line` with the default
settings they flag every LoCoMo dev turn; their `analyze_string` yields every word-like string, the limit
lives in settings), KeywordDetector (standalone it finds only quoted assignments, `password = "x"`, which
PasswordRule finds too, with the plain phrasings), IPPublicDetector (an address is no credential: "my server
is at 203.0.113.7" is a memory worth keeping) and BasicAuthDetector (UrlPasswordRule finds all it finds).

Speed: some detectors' patterns (the assignment patterns of Cloudant, IBM, SoftLayer) are slow on long text, and
every detector on the whole text would cost each add more than its other checks together (bench/README.md
"Secrets"). So each detector has a gate, a cheap pattern that every match of the detector holds: it runs only
when its gate matches, and on a long text only on the lines where it does (no gated pattern crosses a line
break). Gates of case-blind patterns search `text.lower()`, much quicker than a case-blind search; they would
miss only a keyword spelt with a letter that re's case folding adds (ſ for s, the Kelvin sign for k), which no
accidental paste holds. bench/secrets_detector.py checks that the gates never change an answer.

What is read: each string normalised first (memory/secrets/normalise.py: no invisible characters, plain
letters for fullwidth ones and Latin for look-alikes, floats that are integers as digits), then each base64
run in it that decodes to text; and an item's strings joined end to end, for a provider's key split between
two of them (the keyword and assignment detectors, and our rules, read each string alone).
"""

import re
from collections.abc import Iterator
from typing import NamedTuple

from detect_secrets.plugins import (
    artifactory,
    aws,
    azure_storage_key,
    cloudant,
    discord,
    github_token,
    gitlab_token,
    ibm_cloud_iam,
    ibm_cos_hmac,
    jwt,
    mailchimp,
    npm,
    openai,
    private_key,
    pypi_token,
    sendgrid,
    slack,
    softlayer,
    square_oauth,
    stripe,
    telegram_token,
    twilio,
)
from detect_secrets.plugins.base import RegexBasedDetector

from memory.limits import PLAIN_KEY, UNNAMED_KEY
from memory.secrets.normalise import decoded_runs, integral, normalise
from memory.secrets.rules import CardRule, PasswordRule, UrlPasswordRule

Rule = PasswordRule | CardRule | UrlPasswordRule  # ours, which also say where (`spans`)

REDACTED = "[redacted: {}]"  # a secret's place, named by its kind: in stored text, and in messages that echo
KEY_IN_PATH = "<key>"  # names a metadata key in a field path, since the key itself may be the secret
_PLAIN_KEY = re.compile(PLAIN_KEY)
WHOLE_TEXT_BELOW = 2_000  # shorter texts are scanned whole: cutting them into lines costs more than it saves
# A key that ends in a password's name makes its value one: {"wifi_password": "Xy7#kL9q"}, {"door_pin": 4821};
# not {"password_policy": "strict"}.
PASSWORD_KEY = re.compile(r"(?:pass(?:word|code|phrase|wd)|(?<![a-z])pin)$", re.IGNORECASE)


class Detector(NamedTuple):
    rule: RegexBasedDetector | Rule  # a detect-secrets plugin or one of ours: `secret_type`, `analyze_string(text)`
    gate: re.Pattern | None  # every match of the rule holds a match of this cheap pattern; None: always run
    fold: bool  # the gate is lower case, looked for in the lower-cased text
    one_line: bool  # no match of the rule spans a line break, so a long text can be narrowed to lines
    alone: bool  # read in each string alone: a keyword or an assignment, never a key split between strings


def detector(rule, gate: str | None, fold: bool = False, one_line: bool = True, alone: bool = False) -> Detector:
    """A row of DETECTORS, its gate compiled once."""
    return Detector(rule, re.compile(gate) if gate else None, fold, one_line, alone)


# An assignment pattern ("cloudant_password = ...") is a prefix, an optional "-" or "_", an optional "api",
# then a keyword (key, pwd, pw, password, pass, token); its gate says just that.
DETECTORS = (
    detector(aws.AWSKeyDetector(), r"a3t|abia|acca|akia|asia|aws", fold=True),
    detector(azure_storage_key.AzureStorageKeyDetector(), r"AccountKey="),
    detector(cloudant.CloudantDetector(), r"cloudant|cl(?:ou)?[-_]?(?:api|key|pw|pass|token)", fold=True, alone=True),
    detector(discord.DiscordBotTokenDetector(), None),
    detector(github_token.GitHubTokenDetector(), r"gh[pousr]_"),
    detector(gitlab_token.GitLabTokenDetector(), r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941"),
    detector(ibm_cos_hmac.IbmCosHmacDetector(), r"secret[-_]?(?:access)?[-_]?key", fold=True, alone=True),
    detector(jwt.JwtTokenDetector(), r"eyJ"),
    detector(mailchimp.MailchimpDetector(), r"-us\d"),
    detector(npm.NpmDetector(), r"/:_authToken=", one_line=False),  # `=\s*` may run onto the next line
    detector(openai.OpenAIDetector(), r"T3BlbkFJ"),
    detector(private_key.PrivateKeyDetector(), r"PRIVATE KEY|PuTTY-User-Key-File-2"),
    detector(pypi_token.PypiTokenDetector(), r"pypi-AgE"),
    detector(sendgrid.SendGridDetector(), r"SG\."),
    detector(slack.SlackDetector(), r"xox|hooks\.slack\.com", fold=True),
    detector(
        softlayer.SoftlayerDetector(),
        r"softlayer|/soap/v3|sl[-_]?(?:api|[-_]?(?:key|pw|pass|token))",
        fold=True,
        alone=True,
    ),
    detector(square_oauth.SquareOAuthDetector(), r"sq0csp-"),
    detector(stripe.StripeDetector(), r"k_live_"),
    detector(telegram_token.TelegramBotTokenDetector(), r":[0-9A-Za-z_-]{35}"),
    detector(twilio.TwilioKeyDetector(), r"(?:AC|SK)[a-z0-9]{32}"),
    detector(artifactory.ArtifactoryDetector(), r"AKC[a-zA-Z0-9]{10}|AP[\dA-F][a-zA-Z0-9]{8}"),
    # its prefix may be empty, so any "token: <44 characters>" matches: hence late, behind the named providers;
    # the gate is the pattern without its prefix: keyword, quote, bracket, spaces, assignment, quote, secret
    detector(
        ibm_cloud_iam.IbmCloudIamDetector(),
        r"(?:key|pwd|password|pass|token)[\"']?\]? *(?:=>?|:[=:]?| +) *[\"']?[a-z0-9_-]{44}",
        fold=True,
        alone=True,
    ),
    detector(UrlPasswordRule(), r"://", alone=True),
    detector(PasswordRule(), r"pass|pin", fold=True, one_line=False, alone=True),  # "Password:\nhunter2" spans two
    detector(CardRule(), None, alone=True),  # its own pattern is as cheap as a gate
)
KINDS = tuple(each.rule.secret_type for each in DETECTORS)
SPLIT = tuple(each for each in DETECTORS if not each.alone)  # the providers' formats: read across strings too
SEAM_MAX = 512  # characters read either side of where two fields meet: more than any provider's key
_SPLIT_UNGATED = tuple(each for each in SPLIT if each.gate is None)
_SPLIT_FOLD_GATE = re.compile("|".join(each.gate.pattern for each in SPLIT if each.gate and each.fold))
_SPLIT_GATE = re.compile("|".join(each.gate.pattern for each in SPLIT if each.gate and not each.fold))


def find_secret(text: str, detectors: tuple[Detector, ...] = DETECTORS) -> str | None:
    """The kind ("AWS Access Key", "Password", "Payment card number"...) of the first secret in `text`, by
    the order of DETECTORS, or None; `detectors`: those of them still worth running (`_worth_running`). The
    text is read normalised, then each base64 run in it that decodes to text. Safe to call from many threads
    at once."""
    return _read(normalise(text), detectors)


def readings(text: str) -> list[str]:
    """What the detector reads of `text`, in order: the text normalised, then each base64 run in it that
    decodes to text, normalised (bench/secrets_detector.py runs every detector on each, without gates)."""
    normalised = normalise(text)
    return [normalised, *(normalise(decoded) for decoded in decoded_runs(normalised))]


def _read(normalised: str, detectors: tuple[Detector, ...]) -> str | None:
    """find_secret of a text already normalised; the decoded runs get every detector (no gate saw them)."""
    kind = _find(normalised, detectors)
    for decoded in () if kind else decoded_runs(normalised):
        if kind := _find(normalise(decoded), DETECTORS):
            break
    return kind


def _find(text: str, detectors: tuple[Detector, ...]) -> str | None:
    """The kind of the first secret `detectors` find in `text` as it is, each run only where its gate says."""
    lowered = text.lower()
    for each in detectors:
        haystack = lowered if each.fold else text
        if each.gate is None:
            candidate = text
        elif len(text) < WHOLE_TEXT_BELOW or not each.one_line or len(haystack) != len(text):
            candidate = text if each.gate.search(haystack) else ""
        else:
            candidate = _lines_holding(text, haystack, each.gate)
        if candidate and next(iter(each.rule.analyze_string(candidate)), None) is not None:
            return each.rule.secret_type
    return None


def _worth_running(texts: list[str]) -> tuple[Detector, ...]:
    """The detectors whose gate matches somewhere in `texts`: a gate that matches none of them all together
    matches none of them alone. An item holds a dozen short strings (its fields, metadata keys and values),
    and trying every gate on each would be most of its add's time (bench/README.md "Secrets")."""
    joined = "\n".join(texts)
    lowered = joined.lower()
    return tuple(each for each in DETECTORS if each.gate is None or each.gate.search(lowered if each.fold else joined))


def _lines_holding(text: str, haystack: str, gate: re.Pattern) -> str:
    """The lines of `text` where `gate` matches `haystack` (the text or its lower case, of the same length,
    so positions agree), joined: all that a one-line pattern could match in the whole text."""
    lines, at = [], 0
    while hit := gate.search(haystack, at):
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.start())
        end = len(text) if end == -1 else end
        lines.append(text[start:end])
        at = end + 1
    return "\n".join(lines)


def key_in_path(key: str) -> str:
    """How a field path names a metadata key that holds no secret: as it is when plainly a name, else
    UNNAMED_KEY, since a caller's key may be anything (a line of markdown, a kilobyte) and a path is answered."""
    return key if _PLAIN_KEY.match(key) else UNNAMED_KEY


def scan_item(item: dict) -> tuple[str, str] | None:
    """(field path, kind) of the first secret in an item, or None. Every string is scanned: top-level fields
    (text, id, author, role, session, title, about...) and metadata keys and values at any depth
    ("metadata.api.token", "metadata.tags[2]"; a key that is itself a secret is "metadata.<key>"). Integers
    are scanned as their digits, since a card number fits in a JSON number; the value of a key that names a
    password ("wifi_password", "pin") is read as given after that keyword. Top-level keys are scanned too,
    so no path ever holds a secret. A float that is an integer is read as one (4111111111111111.0), and a
    provider's key split between two strings is found in them joined (`_split_secret`)."""
    texts = [(path, normalise(text)) for path, text in _texts(item, "", None)]
    detectors = _worth_running([text for _, text in texts])
    for path, text in texts:
        if kind := _read(text, detectors):
            return path, kind
    return _split_secret(texts)


def _split_secret(texts: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(path, kind) of a provider's key split between two neighbouring fields of an item ("…AKIAUJZDE8" ending
    its text, "GXD6NCF10E" opening its title, in either order), read by the providers' formats (SPLIT) where
    the two meet: the last word of one joined to the first word of the next (no key holds a space). Named by
    the path of the field the key starts in. Only the top-level strings: metadata's many short values would
    meet in runs that look like tokens to the gates. Every meeting is read as one text, its gates at once."""
    values = [(path, text) for path, text in texts if "." not in path and "[" not in path and path != KEY_IN_PATH]
    words = [(path, _edge_word(text[-SEAM_MAX:], -1), _edge_word(text[:SEAM_MAX], 0)) for path, text in values]
    seams = []  # (the path of the field that ends, its last word, the path of the one that opens, its first word)
    for (path, last, first), (next_path, next_last, next_first) in zip(words, words[1:], strict=False):
        if last and next_first:
            seams.append((path, last, next_path, next_first))
        if next_last and first:
            seams.append((next_path, next_last, path, first))
    joined = "\n".join(tail + head for _, tail, _, head in seams)
    gated = _SPLIT_FOLD_GATE.search(joined.lower()) or _SPLIT_GATE.search(joined)
    kind = _find(joined, SPLIT if gated else _SPLIT_UNGATED) if seams else None
    if kind is None:
        return None
    rule = next(each.rule for each in SPLIT if each.rule.secret_type == kind)
    at = max(joined.find(next(iter(rule.analyze_string(joined)), "")), 0)
    for ending, tail, opening, head in seams:
        if at <= len(tail) + len(head):
            return (ending if at < len(tail) else opening), kind
        at -= len(tail) + len(head) + 1
    return values[0][0], kind


def _edge_word(text: str, edge: int) -> str:
    """The word at one edge of `text` (0: its first, -1: its last), or "" when whitespace is there."""
    if not text or text[edge].isspace():
        return ""
    return text.split(maxsplit=1)[0] if edge == 0 else text.rsplit(maxsplit=1)[-1]


def _texts(value, path: str, password_key: re.Match | None) -> Iterator[tuple[str, str]]:
    """(the path it is answered by, the text scanned) for every string of the item, in order."""
    if isinstance(value, dict):
        for key, inner in value.items():
            name = str(key)
            yield (f"{path}.{KEY_IN_PATH}" if path else KEY_IN_PATH), name
            shown = key_in_path(name)
            yield from _texts(inner, f"{path}.{shown}" if path else shown, PASSWORD_KEY.search(name))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _texts(inner, f"{path}[{index}]", password_key)
    elif isinstance(value, float) and (whole := integral(value)) is not None:
        yield path, f"{password_key.group()}: {whole}" if password_key else str(whole)
    elif isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        yield path, f"{password_key.group()}: {value}" if password_key else str(value)
