"""What the secret detector reads: a string as a person reads it, so a key cannot slip past the patterns in
characters no one sees or letters that only look alike, nor be hidden by an encoding anyone can undo.

`normalise(text)`: format characters removed (Unicode Cf: U+200B zero-width space, U+00AD soft hyphen,
joiners, bidirectional marks), NFKC (fullwidth and mathematical letters become plain ones), combining marks
left over removed, and in a word that mixes them with ASCII letters or digits, the Cyrillic and Greek
look-alikes of Latin letters folded to Latin ("АKIA…" with a Cyrillic А); a number written as a float
that is an integer ("4111111111111111.0", "4.111111111111111e15") becomes its digits. A word written
wholly in Cyrillic or Greek is left as it is, so a Russian or Greek sentence reads as itself.

`decoded_runs(text)`: the text of each base64 run long enough to hide a key, when it decodes to text.

Only what is scanned is normalised: what is stored, answered or redacted is the caller's own text.
"""

import base64
import binascii
import math
import re
import unicodedata

# Unicode's format characters (category Cf), written out rather than found at import (a walk over every
# code point costs a process 0.2 s); tests/security/test_secrets_detector.py checks the list against the
# running Python's Unicode.
FORMAT_CHARACTERS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_FORMAT = re.compile(f"[{FORMAT_CHARACTERS}]+")
# The combining marks NFKC leaves when no letter takes them (the blocks of marks any script may carry).
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
# Cyrillic and Greek letters that look like a Latin letter (from Unicode's confusables: those a key's
# alphabet, A-Z, a-z and 0-9, can be spoofed with), each pair written look-alike first.
LOOK_ALIKES = (
    "АA ВB СC ЕE НH ІI ЈJ КK МM ОO РP ЅS ТT ХX УY ҮY ԜW ԚQ аa сc ԁd еe һh іi јj оo рp ѕs хx уy ԝw ԛq ӏl ѵv "
    "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ϹC ͿJ οo νv ρp ιi κk αa υu ϲc ϳj"
).split()
_FOLD = str.maketrans({pair[0]: pair[1] for pair in LOOK_ALIKES})
_LOOK_ALIKE = re.compile("[" + "".join(pair[0] for pair in LOOK_ALIKES) + "]")
_SPOOFING_WORD = re.compile("[^\\W_]*[" + "".join(pair[0] for pair in LOOK_ALIKES) + "][^\\W_]*")
_ASCII_LETTER_OR_DIGIT = re.compile("[A-Za-z0-9]")
# A number written as a float that is an integer: "4111111111111111.0", "4.111111111111111e15", "1234.00".
_POINT_ZERO = re.compile(r"(?<![\w.])(\d+)\.0+(?![\w.])")
_EXPONENT = re.compile(r"(?<![\w.])(\d)\.(\d+)[eE]\+?(\d{1,2})(?![\w.])")
_EXPONENT_HINT = re.compile(r"\d[eE]")  # what every _EXPONENT holds, searched first: far quicker
INTEGRAL_DIGITS_MAX = 19  # a card number's longest: the most digits a float's integer is read as
# A base64 run long enough to hide the shortest key (an AWS key id, 20 characters, encodes to 28; a password
# given as such, "password: hunter22", to 24), in the standard or the URL-safe alphabet.
BASE64_RUN_MIN = 24
_BASE64_RUN = re.compile(f"[A-Za-z0-9+/_-]{{{BASE64_RUN_MIN},}}={{0,2}}")


def normalise(text: str) -> str:
    """`text` as the detector reads it (see the module's docstring). Plain ASCII costs only the quick
    searches for the number forms; the slower steps run only on a text that holds what they change."""
    if not text.isascii():
        text = _FORMAT.sub("", text)
        text = _COMBINING.sub("", unicodedata.normalize("NFKC", text))
        if _LOOK_ALIKE.search(text):
            text = _SPOOFING_WORD.sub(_folded_word, text)
    if "." not in text:  # both number forms hold a point, as a float's digits are written
        return text
    if ".0" in text:
        text = _POINT_ZERO.sub(r"\1", text)
    if _EXPONENT_HINT.search(text):
        text = _EXPONENT.sub(_expanded, text)
    return text


def _folded_word(word: re.Match) -> str:
    """A word that mixes ASCII letters or digits with look-alikes, folded to Latin; any other as it is."""
    found = word.group()
    return found.translate(_FOLD) if _ASCII_LETTER_OR_DIGIT.search(found) else found


def _expanded(number: re.Match) -> str:
    """ "4.111111111111111e15" as its digits when it is an integer of at most INTEGRAL_DIGITS_MAX digits."""
    whole, fraction, exponent = number.group(1), number.group(2), int(number.group(3))
    fraction = fraction.rstrip("0")
    if len(fraction) > exponent or exponent >= INTEGRAL_DIGITS_MAX:
        return number.group()
    return whole + fraction + "0" * (exponent - len(fraction))


def integral(value: float) -> int | None:
    """A JSON number that is a float holding an integer (a card number sent as 4111111111111111.0), as that
    integer; None for any other."""
    if not math.isfinite(value) or not value.is_integer() or abs(value) >= 10**INTEGRAL_DIGITS_MAX:
        return None
    return int(value)


def decoded_runs(text: str) -> list[str]:
    """The text of each base64 run in `text` (BASE64_RUN_MIN characters or more) that decodes to UTF-8 text
    with nothing unprintable but whitespace: one level deep, and never more to read than the text itself."""
    if len(text) < BASE64_RUN_MIN:
        return []
    found = []
    long_words = [word for word in text.split() if len(word) >= BASE64_RUN_MIN]  # str.split: quicker than a scan
    for run in (run for word in long_words for run in _BASE64_RUN.findall(word)):
        body = run.rstrip("=").replace("-", "+").replace("_", "/")
        try:
            raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if all(c.isprintable() or c.isspace() for c in decoded):
            found.append(decoded)
    return found
