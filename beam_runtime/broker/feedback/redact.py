"""Removing secrets and the home directory from what a feedback report says.

`redact_value` walks a value (strings, lists, dicts, keys included) and redacts each string on its
own, before anything is serialized, so no rule can cut through JSON or Markdown syntax. The rules
cover the common shapes: provider keys and tokens by their prefixes, JWTs, bearer and basic
credentials, passwords in URLs, private key blocks, ``KEY=value`` environment assignments,
``name = value`` / ``name: value`` / JSON pairs whose name says secret, and long random-looking
strings. Lean code that merely uses such words (``token : Token``, ``def secret := 1``) survives.
"""

from __future__ import annotations

import os
import re
from typing import Any

MARK = "[redacted]"

_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*-----|\Z)",
    re.DOTALL,
)

_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}"  # AWS access key ids
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}"  # GitHub
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|sk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API keys
    r"|ya29\.[0-9A-Za-z_-]{20,}"  # Google OAuth access tokens
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"  # Slack
    r"|(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{16,}"  # Stripe
    r"|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{40,}"  # package registries
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid
    r"|dop_v1_[a-f0-9]{40,}|shp(?:at|ss|ca)_[a-fA-F0-9]{32}|dapi[a-f0-9]{32}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWTs
    r")"
)

_SLACK_HOOK = re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")
# scheme://user:password@host: the password runs to the last `@` that a host name follows, so
# `@` and `/` inside it are covered; `host:8080/...` (a port, digits) is no password
_URL_PASSWORD = re.compile(
    r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@\"'<>]*):(?!\d+(?:[/?#\s\"'<>]|$))([^\s\"'<>]+)@"
    r"(?=[A-Za-z0-9.\[\]_-]+(?::\d+)?(?:[/?#\s\"'<>),;]|$))"
)
_AUTH_HEADER = re.compile(r"(?i)\b(authorization|proxy-authorization)(\s*[:=]\s*)[^\r\n]+")
_BEARER = re.compile(r"(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{16,})")
# `token <value>` in prose: only a value with letters and digits that is not made of words
_TOKEN_WORD = re.compile(r"(?i)\b(token)(\s+)([A-Za-z0-9._~+/=-]{16,})")
# .netrc: `machine <host> [login <user>] [account <a>] password <secret>` on one line, and a
# `password <secret>` line of a netrc block (a `machine <host>` or `default` line before it)
_NETRC_LINE = re.compile(
    r"(?i)((?:\bmachine\s+\S+|\bdefault)(?:\s+(?:login|account)\s+\S+)*\s+(?:password|passwd)\s+)"
    r"(\S+)"
)
_NETRC_BLOCK = re.compile(r"(?im)^[ \t]*(?:machine[ \t]+\S+|default)[ \t]*$")
_NETRC_PASSWORD = re.compile(r"(?im)^([ \t]*(?:password|passwd)[ \t]+)(\S+)[ \t]*$")
# Azure shared access signatures: the `sig` parameter of a SAS URL or connection string
_SAS_SIG = re.compile(r"(?i)([?&;]sig=)([^&\s\"'<>;]+)")
# Docker's config.json: `"auth": "<base64 of user:password>"`
_JSON_AUTH = re.compile(r"(?i)([\"']auth[\"'])(\s*:\s*)(\"[^\"\n]*\"|'[^'\n]*')")

_SECRET_WORD = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?"
    r"|account[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth[_-]?token|session"
    r"[_-]?key|signing[_-]?key|encryption[_-]?key)"
)
# the secret word ends the name or a part of it: `db_password_old`, not `secretary_count`
_NAME = rf"[A-Za-z0-9_.-]*?{_SECRET_WORD}(?:[_.-][A-Za-z0-9_.-]*)?"
_QUOTED = r"\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'"
# name = value (never Lean's `:=`), the value quoted or bare
_ASSIGN = re.compile(rf"(?i)(?<![A-Za-z0-9_])([\"']?{_NAME}[\"']?)(\s*=\s*)({_QUOTED}|[^\s,;&]+)")
# "name": "value" (JSON), quoted name and quoted value
_JSON_PAIR = re.compile(rf"(?i)([\"']{_NAME}[\"'])(\s*:\s*)({_QUOTED})")
# name: value at the start of a line. YAML writes no space before the colon, so any value goes
# (`password: swordfish`); with a space before it (Lean's `token : Token`) a bare value must
# not be a plain word
_YAML_LINE = re.compile(rf"(?im)^(\s*-?\s*{_NAME})(:[ \t]+)({_QUOTED}|[^\s]+)")
_COLON_LINE = re.compile(
    rf"(?im)^(\s*-?\s*{_NAME})(\s+:(?!=)\s*)({_QUOTED}|(?=[^\s]*[^\sA-Za-z])[^\s]{{4,}})"
)
# a key of a mapping (JSON, YAML, a dict) whose name says secret: its value goes whole
_SECRET_KEY = re.compile(rf"(?i)[\"']?(?:{_NAME}|auth)[\"']?")
_ENV_ASSIGN = re.compile(r"\b([A-Z][A-Z0-9_]{2,})=(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;]+)")
# values of an assignment that cannot be a credential
_TRIVIAL = re.compile(r"(?i)(?:true|false|yes|no|on|off|none|null|\d{1,3})")
# long random-looking strings: upper and lower case letters and digits mixed, few separators
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_+=-])[A-Za-z0-9_+=-]{32,}(?![A-Za-z0-9_+=-])")
# base64 with `/` or `+` (AWS secret access keys, 40 characters, are this shape)
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{30,}={0,2}(?![A-Za-z0-9+/=])")
_WORD_PIECE = re.compile(r"[A-Z]?[a-z]{2,}")
_VOWELS = frozenset("aeiouyAEIOUY")


def _mixed(word: str) -> bool:
    return (
        any(c.isupper() for c in word)
        and any(c.islower() for c in word)
        and any(c.isdigit() for c in word)
    )


def _wordlike(word: str) -> bool:
    """Made of words (`instDecidableEqProdNatOfDecidableEq2`, Lean's instance names): three or
    more pronounceable pieces (a vowel in every four letters) cover three quarters of it.

    A random base62 string of 32 characters passes this about 6 times in 100,000.
    """
    pieces = [p for p in _WORD_PIECE.findall(word) if sum(c in _VOWELS for c in p) * 4 >= len(p)]
    return len(pieces) >= 3 and sum(map(len, pieces)) * 4 >= len(word) * 3


def _random_looking(match: re.Match[str]) -> str:
    word = match.group(0)
    separators = sum(word.count(c) for c in "_-")
    keep = not _mixed(word) or separators * 4 > len(word) or _wordlike(word)
    return word if keep else MARK


def _base64_secret(match: re.Match[str]) -> str:
    word = match.group(0)
    core = word.rstrip("=")
    if "/" not in core and "+" not in core:
        return word  # no base64-only character: `_CANDIDATE` decides
    path_like = _wordlike(core) or len(set(core)) * 2 < len(core)  # `Mathlib/Order/Lemmas2`
    return word if path_like or not _mixed(core) else MARK


def _token_value(match: re.Match[str]) -> str:
    value = match.group(3)
    has_digit = any(c.isdigit() for c in value)
    has_letter = any(c.isalpha() for c in value)
    keep = not (has_digit and has_letter) or _wordlike(value) or "." in value.strip(".")
    return match.group(0) if keep and not _mixed(value) else _keep_name(match)


def _env_value(match: re.Match[str]) -> str:
    value = match.group(2)
    return match.group(0) if _TRIVIAL.fullmatch(value) else f"{match.group(1)}={MARK}"


def _netrc(text: str) -> str:
    text = _NETRC_LINE.sub(lambda m: f"{m.group(1)}{MARK}", text)
    if _NETRC_BLOCK.search(text):
        text = _NETRC_PASSWORD.sub(lambda m: f"{m.group(1)}{MARK}", text)
    return text


def _keep_name(match: re.Match[str]) -> str:
    return f"{match.group(1)}{match.group(2)}{MARK}"


def redact(text: str, home: str | None = None) -> str:
    """`text` with secrets replaced by ``[redacted]`` and the home directory by ``~``."""
    home = os.path.expanduser("~") if home is None else home
    if home and home != "/":
        text = text.replace(home, "~")
    text = _PEM.sub(f"{MARK} private key", text)
    text = _SLACK_HOOK.sub(MARK, text)
    text = _URL_PASSWORD.sub(rf"\1:{MARK}@", text)
    text = _SAS_SIG.sub(lambda m: f"{m.group(1)}{MARK}", text)
    text = _netrc(text)
    text = _AUTH_HEADER.sub(_keep_name, text)
    text = _BEARER.sub(_keep_name, text)
    text = _TOKEN_WORD.sub(_token_value, text)
    text = _PREFIXED.sub(MARK, text)
    text = _JSON_AUTH.sub(_keep_name, text)
    text = _JSON_PAIR.sub(_keep_name, text)
    text = _ASSIGN.sub(_keep_name, text)
    text = _YAML_LINE.sub(_keep_name, text)
    text = _COLON_LINE.sub(_keep_name, text)
    text = _ENV_ASSIGN.sub(_env_value, text)
    text = _BASE64.sub(_base64_secret, text)
    return _CANDIDATE.sub(_random_looking, text)


def redact_value(value: Any, home: str | None = None) -> Any:
    """A copy of `value` with every string in it (dict keys too) passed through `redact`; a
    string value under a key whose name says secret (`password`, `"auth"`) goes whole."""
    if isinstance(value, str):
        return redact(value, home)
    if isinstance(value, dict):
        return {redact_value(k, home): _entry(k, v, home) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(item, home) for item in value]
    return value


def _entry(key: Any, value: Any, home: str | None) -> Any:
    secret = isinstance(key, str) and _SECRET_KEY.fullmatch(key) is not None
    if secret and isinstance(value, str) and value:
        return MARK
    return redact_value(value, home)
