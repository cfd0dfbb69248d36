"""Rules of our own for secrets the detect-secrets plugins miss or know only in part: a password given as
such, a card number, a password in a URL. Each has the plugins' shape (`secret_type`, `analyze_string(text)`
yielding what it finds), so detect.py runs them in the same table, and `spans(text)` saying where
(gate.py redacts there); their patterns are compiled once, at import, and nothing is written
after, so they are safe under threads."""

import re

PASSWORD = "Password"
PAYMENT_CARD = "Payment card number"
PASSWORD_GAP_WORDS = 3  # the words between a keyword and its link: "the PIN for the door is 4821"
PASSWORD_MIN_CHARS = 4  # "is 8 characters long" gives "8", which is no password
PIN_DIGITS = range(4, 13)
CARD_DIGITS = range(13, 20)
# Where a password would go, these stand for one: $DB_PASSWORD, ${TOKEN}, <password>, {{password}},
# %(password)s, ****, xxxx, and our own "[redacted: Password]", so redacted text is not refused again.
PLACEHOLDER = re.compile(r"\$\{?[A-Z_][A-Z0-9_]*\}?|<[^<>]*>|\{+[^{}]*\}+|%\(\w+\)s|\[redacted[^\]]*\]?|[*xX•.]+")


class PasswordRule:
    """A password, passcode or PIN given as such: the keyword, up to three words, a link (is, was, :, =),
    then a value that looks like one. A value right after the keyword ("wifi password Xy7#kL9q", "PIN 4821")
    must look like a credential; a plain word counts only after a link and when it is not one of the words
    people say about passwords ("my password is weak"). A PIN is 4 to 12 digits."""

    secret_type = PASSWORD
    keyword = re.compile(
        # "p" not after a letter ("DB_PASSWORD" yes, "spin" no); the check follows the "p" so that re can skip
        # ahead to each "p", three times quicker than a pattern that opens with a lookbehind
        r"p(?<![a-z]p)(?:ass(?:word|code|phrase|wd)s?|in)(?:\s+(?:code|number))?\b"
        # "password manager", "pin it": the keyword names a thing or an act, not a value that follows
        r"(?!\s+(?:managers?|resets?|polic(?:y|ies)|hints?|strength|requirements?|rules?|field|prompt|"
        r"recovery|vault|generator|protected|changes?|it|them|this|that|up)\b)",
        re.IGNORECASE,
    )
    # keyword, up to three gap words (never a link, so the first link is the one), a link, the value; "'s"
    # links only straight after the keyword ("password's X", not "her dog's name")
    tail = re.compile(
        rf"[\"']?(?:['’]s\b|(?:\s+(?!(?:is|was|are|will)\b)[\w'’-]+){{0,{PASSWORD_GAP_WORDS}}}?"
        + r"(?:\s*[:=]|\s+(?:is|was|are|will\s+be)\b(?:\s+(?:now|still|set\s+to|changed\s+to)\b)?\s*:?))"
        + r"\s*(?P<value>\S+)",
        re.IGNORECASE,
    )
    bare = re.compile(r"\s+(?P<value>\S+)")
    not_values = frozenset(
        """
        the a an my your his her their our its this that these those same different another other what which
        who whatever something nothing anything everything still now not never always also just only very too
        quite really pretty usually probably definitely easy hard simple complicated complex long short strong
        weak secure insecure safe unsafe good bad great fine okay wrong right correct incorrect valid invalid
        expired changed reset required needed optional mandatory missing empty blank none null unknown saved
        stored written hidden encrypted hashed protected case sensitive literally basically actually generated
        random unique shared known public private personal default temporary sent emailed texted there here
        below above attached ready done working broken locked forgotten lost stolen compromised leaked weird
        funny impossible memorable obvious again being been going supposed meant printed taped somewhere inside
        behind under sticky annoying unchanged updated enabled disabled taken you him them they she we it me
        ours yours mine theirs about like because from with when where how why ok fine yes no nope expiring
        changing loading pending failing coming
    """.split()
    )

    def analyze_string(self, string: str):
        """Yields each password-like value given after a keyword."""
        for start, end in self.spans(string):
            yield string[start:end]

    def spans(self, string: str):
        """Yields where each password-like value given after a keyword is: (start, end)."""
        for keyword in self.keyword.finditer(string):
            is_pin = keyword.group().lower().startswith("pin")
            bare = self.bare.match(string, keyword.end())
            if bare and self._looks_like(bare.group("value"), is_pin, linked=False):
                yield bare.span("value")
                continue
            linked = self.tail.match(string, keyword.end())
            if linked and self._looks_like(linked.group("value"), is_pin, linked=True):
                yield linked.span("value")

    def _looks_like(self, raw: str, is_pin: bool, linked: bool) -> bool:
        value = raw.strip("\"'‘’“”`.,;:!?()")
        if len(value) < PASSWORD_MIN_CHARS or PLACEHOLDER.fullmatch(value) or not any(c.isalnum() for c in value):
            return False
        if is_pin:
            return value.isdigit() and len(value) in PIN_DIGITS
        # a digit, a symbol (an apostrophe or a hyphen only makes a word: "isn't") or a capital inside
        # ("hunTer") is how a credential looks; a plain word needs a link and a closer look
        symbol = any(c.isdigit() or not (c.isalnum() or c in "'’-") for c in value)
        if symbol or any(c.isupper() for c in value[1:]):
            return True
        # "my password was accepted": a participle says what happened to it
        plain_word = value.lower() not in self.not_values and not value.lower().endswith("ed")
        return linked and (raw[0] in "\"'‘“`" or plain_word)


class CardRule:
    """A payment card number: 13 to 19 digits, Luhn-valid, with the IIN and a length of a card network,
    written whole or in the groups cards print (spaces or dashes between). In a longer run of groups a card
    starts or ends the run ("4111 1111 1111 1111 12 26", "CVV 123 4111 1111 1111 1111"): a table of numbers
    is read twice, not once per group, and a list ("1 2 3 4 5 6 7 8 9 10 11 12 13") is no card."""

    secret_type = PAYMENT_CARD
    networks = {  # network: (IIN ranges, each (first, last) of one number of digits; card lengths)
        "Visa": (((4, 4),), (13, 16, 19)),
        "Mastercard": (((51, 55), (2221, 2720)), (16,)),
        "American Express": (((34, 34), (37, 37)), (15,)),
        "Discover": (((6011, 6011), (644, 649), (65, 65)), (16, 17, 18, 19)),
        "JCB": (((3528, 3589),), (16, 17, 18, 19)),
        "Diners Club": (((300, 305), (36, 36), (38, 39)), (14, 15, 16, 17, 18, 19)),
        "UnionPay": (((62, 62),), (16, 17, 18, 19)),
        "Maestro": (
            ((5018, 5018), (5020, 5020), (5038, 5038), (5893, 5893), (6304, 6304), (6759, 6759), (6761, 6763)),
            tuple(CARD_DIGITS),
        ),
        "Mir": (((2200, 2204),), (16, 17, 18, 19)),
    }
    # How cards print their digits: whole, or 16 as 4-4-4-4, Amex 4-6-5, Diners 4-6-4, 13 as 4-4-5,
    # 19 as 4-4-4-4-3.
    layouts = (*((length,) for length in CARD_DIGITS), (4, 4, 4, 4), (4, 6, 5), (4, 6, 4), (4, 4, 5), (4, 4, 4, 4, 3))
    run = re.compile(rf"\d[\d -]{{{CARD_DIGITS.start - 2},}}\d")  # digits, spaces, dashes: long enough
    glued = re.compile(r"[\w.,+/]")  # a run right after a word, a decimal point, a sign or a path is no card

    def analyze_string(self, string: str):
        """Yields the digits of each card number found."""
        for start, end in self.spans(string):
            yield re.sub(r"[ -]", "", string[start:end])

    def spans(self, string: str):
        """Yields where each card number found is, as printed: (start, end)."""
        for run in self.run.finditer(string):
            if run.start() and self.glued.match(string, run.start() - 1):
                continue
            groups = re.split(r"[ -]", run.group())
            starts = [run.start()]
            for group in groups[:-1]:
                starts.append(starts[-1] + len(group) + 1)  # one separator after each group
            sizes = tuple(len(group) for group in groups)
            for layout in self.layouts:
                width = len(layout)
                if sizes[:width] == layout and self._is_card("".join(groups[:width])):
                    yield starts[0], starts[width - 1] + sizes[width - 1]
                if len(sizes) > width and sizes[-width:] == layout and self._is_card("".join(groups[-width:])):
                    yield starts[-width], starts[-1] + sizes[-1]

    def _is_card(self, digits: str) -> bool:
        issued = any(
            len(digits) in lengths and any(low <= int(digits[: len(str(low))]) <= high for low, high in ranges)
            for ranges, lengths in self.networks.values()
        )
        return issued and luhn_valid(digits)


class UrlPasswordRule:
    """A password in a URL's user part: "postgres://ana:s3cret!@db/app". It stands in for the basic-auth
    plugin, which misses a password holding any of !$&'()*+,;= (RFC 3986 lets a password hold them raw).
    A placeholder ("user:password@", ":$TOKEN@", ":<password>@") is no password."""

    secret_type = "Basic Auth Credentials"  # the plugin's name for it
    pattern = re.compile(r"://[^:/?#\[\]@\s]+:([^/?#\[\]@\s]+)@")
    placeholders = frozenset(("password", "pass", "pwd", "secret", "token"))

    def analyze_string(self, string: str):
        """Yields each password found in a URL."""
        for start, end in self.spans(string):
            yield string[start:end]

    def spans(self, string: str):
        """Yields where each password found in a URL is: (start, end)."""
        for match in self.pattern.finditer(string):
            value = match.group(1)
            if not PLACEHOLDER.fullmatch(value) and value.lower() not in self.placeholders:
                yield match.span(1)


def luhn_valid(digits: str) -> bool:
    """The Luhn check every card number passes (ISO/IEC 7812)."""
    total = 0
    for place, digit in enumerate(reversed(digits)):
        value = int(digit) * (2 if place % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0
