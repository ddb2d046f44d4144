"""Feedback reports leak nothing: a corpus of secret shapes, and look-alikes.

The secrets are built here from random characters in each provider's shape, so none is real.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from beam_runtime.broker.feedback.redact import MARK, redact, redact_value
from tests.broker.conftest import start
from tests.mcp.helpers import Server, call, structured

_RNG = random.Random(13)
UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS


def r(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def mixed(n: int, extra: str = "") -> str:
    """N random characters with at least one upper, one lower case letter and one digit."""
    return r(UPPER, 1) + r(LOWER, 1) + r(DIGITS, 1) + r(ALNUM + extra, n - 3)


HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def _secrets() -> list[tuple[str, str]]:
    """(text containing a secret, the secret itself)."""
    aws_id = "AKIA" + r(UPPER + DIGITS, 16)
    aws_secret = mixed(40, "+/")
    pem_body = "\n".join(mixed(64, "+/") for _ in range(4))
    jwt = "eyJ" + mixed(20) + ".eyJ" + mixed(30) + "." + mixed(43, "_-")
    cases = [
        (f"aws_access_key_id = {aws_id}", aws_id),
        (f"aws_secret_access_key = {aws_secret}", aws_secret),
        (f"export AWS_SECRET_ACCESS_KEY={aws_secret}", aws_secret),
        (f"temporary key ASIA{r(UPPER + DIGITS, 16)} expired", "ASIA"),
        (f"token ghp_{mixed(36)} in the log", "ghp_"),
        (f"GITHUB_TOKEN=gho_{mixed(36)}", "gho_"),
        (f"github_pat_{mixed(22)}_{mixed(59)}", "github_pat_"),
        (f"glpat-{mixed(20)}", "glpat-"),
        (f"OPENAI_API_KEY: sk-proj-{mixed(48, '_-')}", "sk-proj-"),
        (f"key sk-{mixed(48)}", "sk-"),
        (f"anthropic sk-ant-api03-{mixed(93, '_-')}AA", "sk-ant-"),
        (f"https://maps.example/?key=AIza{mixed(35, '_-')}", "AIza"),
        (f"Authorization: Bearer ya29.{mixed(60, '_-')}", "ya29."),
        (f"slack xoxb-{r(DIGITS, 12)}-{r(DIGITS, 13)}-{mixed(24)}", "xoxb-"),
        (
            f"hook https://hooks.slack.com/services/T{r(UPPER, 8)}/B{r(UPPER, 10)}/{mixed(24)}",
            "hooks.slack.com/services/T",
        ),
        (f"stripe sk_live_{mixed(24)}", "sk_live_"),
        (f"rk_test_{mixed(24)} for tests", "rk_test_"),
        (f"whsec_{mixed(32)}", "whsec_"),
        (f"//registry.npmjs.org/:_authToken=npm_{mixed(36)}", "npm_"),
        (f"password = pypi-AgEIcHlwaS5vcmc{mixed(60, '_-')}", "pypi-"),
        (f"HF_TOKEN hf_{mixed(34)}", "hf_"),
        (f"SG.{mixed(22, '_-')}.{mixed(43, '_-')}", "SG."),
        (f"dop_v1_{r(HEX, 64)}", "dop_v1_"),
        (f"shpat_{r(HEX, 32)}", "shpat_"),
        (f"databricks dapi{r(HEX, 32)}", "dapi"),
        (f"id_token={jwt}", jwt),
        (f"curl -H 'Authorization: Basic {mixed(28, '+/')}=='", "Authorization: " + "x"),
        (f"Bearer {mixed(40, '._-')}", "Bearer " + "x"),
        ("postgres://admin:Hunter2-" + r(ALNUM, 8) + "@db.internal:5432/app", "Hunter2-"),
        ("git clone https://oauth2:" + mixed(20) + "@gitlab.example.com/x.git", "oauth2:"),
        ('{"password": "correct horse battery staple"}', "correct horse"),
        ('{"client_secret": "' + mixed(24) + '"}', '"client_secret": ' + "x"),
        ("db_password: 'p@ss w0rd!'", "p@ss"),
        ("password: hunter2", "hunter2"),
        ("  api_key: " + mixed(32), "api_key: " + "x"),
        ("DB_PASS=" + mixed(12), "DB_PASS=" + "x"),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + mixed(86, "+/") + "==",
            "AccountKey=" + "x",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body + "\n-----END RSA PRIVATE KEY-----",
            pem_body.splitlines()[1],
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\n"
            + pem_body
            + "\n-----END OPENSSH PRIVATE KEY-----",
            pem_body.splitlines()[2],
        ),
        ("cookie session_key=" + mixed(32), "session_key=" + "x"),
        ("a bare random token " + mixed(40) + " pasted alone", "pasted"),
    ]
    return cases


SECRETS = _secrets()

LOOK_ALIKES = [
    "theorem add_comm (a b : Nat) : a + b = b + a := by omega",
    'def tokenize (s : String) : List Token := s.splitOn " " |>.map Token.mk',
    "structure Config where\n  token : Token\n  password : String",
    "  secret : Nat := 42",
    "def secret := 1",
    "theorem password_length_pos (p : Password) : 0 < p.length := p.pos",
    "#check @Lean.Parser.Term.byTactic",
    "import Mathlib.Algebra.Order.Ring.Lemmas",
    "Nat.lt_of_lt_of_le_of_succ_le_succ_of_something_long",
    "List.foldl_eq_foldr_reverse_of_comm_of_assoc_theorem_2",
    "error: unknown identifier 'keyword'",
    "the author = Jane Doe, see https://example.org/docs",
    "source_hash sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "rev 3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c",
    "runtime 0.4.1-0123456789abcdef is current",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "/home/alice/.elan/toolchains/leanprover--lean4---v4.24.0/bin/lean",
    "/tmp/pytest-of-root/pytest-112/test_report_redacts_and_echoes0/proj/Main.lean",
    "file Abc=1.lean in the project",
    "lean_run_at line 12 character 4 took 1532 ms",
    "https://github.com/leanprover/lean4/blob/master/src/Init/Prelude.lean",
    "the URL http://localhost:8080/path?x=1 answered 200",
    "sk-ip is a Slovak domain",
    "AKIA is not followed by enough characters here",
    "ghp_short",
    "Bearer of bad news",
    "basic arithmetic is decidable",
    "tokens: 42 in, 17 out",
    'password_hint := "the usual"',
    "let key := (k, v)",
    "example : secretary_count = 5 := rfl",
    '#eval ("hello", 3).1',
    "application type mismatch\n  h\nhas type\n  a = b : Prop",
    "Content-Length: 1234",
    "BEGIN PUBLIC KEY blocks are not secrets",
    "JWT tokens start with eyJ followed by base64",
]


@pytest.mark.parametrize(("text", "secret"), SECRETS, ids=[str(i) for i in range(len(SECRETS))])
def test_every_secret_shape_is_redacted(text: str, secret: str) -> None:
    out = redact(text, home="/nonexistent-home")
    assert MARK in out, out
    probe = secret[:-1] if secret.endswith("x") else secret  # "x": the value after a name
    if secret.endswith("x"):
        assert probe in out, out  # the name stays, its value goes
        assert text.split(probe, 1)[1][:8] not in out, out
    elif secret in ("pasted",):
        assert "pasted alone" in out and len(out) < len(text)
    else:
        tail = text[text.index(probe) + len(probe) :][:12] if probe in text else ""
        assert (tail and tail not in out) or probe not in out, out


def test_the_corpora_are_big_enough() -> None:
    assert len(SECRETS) >= 30 and len(LOOK_ALIKES) >= 30


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_survive(text: str) -> None:
    assert redact(text, home="/nonexistent-home") == text


def test_structures_stay_valid_and_keys_are_redacted_too() -> None:
    value = {"ABC=1.lean": ["tag sk-" + mixed(40), {"password": "x"}], "n": 3, "ok": None}
    out = redact_value(value, home="/h")
    assert json.loads(json.dumps(out)) == out
    assert "ABC=[redacted]" in out and out["n"] == 3 and out["ok"] is None
    assert "sk-" not in json.dumps(out)


def test_report_redacts_every_field_and_the_bundle_folder(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    server = start(servers, HOME=str(home))
    token = "ghp_" + mixed(36)
    (project / "ABC=1.lean").write_text("def a := 1\n")
    args = {
        "workspace": {"root": str(project)},
        "title": f"leak {token} via ABC=1.lean",
        "summary": SECRETS[1][0],
        "reproduction": f"open {home}/ABC=1.lean",
        "expected": "nothing leaks",
        "actual": SECRETS[29][0],
        "tags": [token, "TOKEN=" + mixed(20)],
        "evidence": [{"name": f"log {token}", "content": {"password": "x" + mixed(10)}}],
        "bundle": "dir",
        "include_collected": True,
    }
    reply = server.ask(call(1, "beam_feedback_report", args))
    assert reply["result"]["isError"] is False, reply
    body = structured(reply)
    folder = Path(body["bundle_dir"])
    written = "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    shown = {key: value for key, value in body.items() if key != "bundle_dir"}
    everything = (
        json.dumps(shown) + written + folder.name + " ".join(p.name for p in folder.rglob("*"))
    )
    for secret in (token, SECRETS[1][1], "Hunter2-", str(home)):
        assert secret not in everything, secret
    assert "ghp" not in folder.name
    assert body["metadata"]["tags"][0] == MARK
