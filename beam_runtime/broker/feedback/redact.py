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
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@]*):([^\s/@]+)@")
_AUTH_HEADER = re.compile(r"(?i)\b(authorization|proxy-authorization)(\s*[:=]\s*)[^\r\n]+")
_BEARER = re.compile(r"(?i)\b(bearer|basic|token)(\s+)([A-Za-z0-9._~+/=-]{16,})")

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
# name: value at the start of a line (YAML, headers); a bare value must not be a plain word,
# so that a Lean field `token : Token` survives
_COLON_LINE = re.compile(
    rf"(?im)^(\s*-?\s*{_NAME})(\s*:(?!=)\s*)({_QUOTED}|(?=[^\s]*[^\sA-Za-z])[^\s]{{4,}})"
)
_ENV_ASSIGN = re.compile(r"\b([A-Z][A-Z0-9_]{2,})=(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;]+)")
# long random-looking strings: upper and lower case letters and digits mixed, few separators
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_+=-])[A-Za-z0-9_+=-]{32,}(?![A-Za-z0-9_+=-])")


def _random_looking(match: re.Match[str]) -> str:
    word = match.group(0)
    mixed = (
        any(c.isupper() for c in word)
        and any(c.islower() for c in word)
        and any(c.isdigit() for c in word)
    )
    separators = sum(word.count(c) for c in "_-")
    return MARK if mixed and separators * 8 <= len(word) else word


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
    text = _AUTH_HEADER.sub(_keep_name, text)
    text = _BEARER.sub(_keep_name, text)
    text = _PREFIXED.sub(MARK, text)
    text = _JSON_PAIR.sub(_keep_name, text)
    text = _ASSIGN.sub(_keep_name, text)
    text = _COLON_LINE.sub(_keep_name, text)
    text = _ENV_ASSIGN.sub(lambda m: f"{m.group(1)}={MARK}", text)
    return _CANDIDATE.sub(_random_looking, text)


def redact_value(value: Any, home: str | None = None) -> Any:
    """A copy of `value` with every string in it (dict keys too) passed through `redact`."""
    if isinstance(value, str):
        return redact(value, home)
    if isinstance(value, dict):
        return {redact_value(k, home): redact_value(v, home) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(item, home) for item in value]
    return value
