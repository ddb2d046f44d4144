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


def _pct(text: str) -> str:
    return text.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")


def _shapes() -> list[tuple[str, list[str]]]:
    """(text, the parts of it that must not survive): shapes that need more than `name = value`."""
    aws = mixed(38, "") + "/+"  # 40 characters of base64 with its two special ones
    aws_example = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    word = r(LOWER, 9)
    sas = mixed(40, "+/") + "="
    docker = "YWxpY2U6" + mixed(16)  # base64 of "alice:..."
    letters = r(LOWER, 10)
    return [
        (f"the secret key is {aws} (rotate it)", [aws[:20], aws[20:]]),
        (f"aws configure set aws_secret_access_key {aws}", [aws[:20]]),
        (f"AWS docs example: {aws_example}", [aws_example]),
        (f"CREDENTIALS\tASIA{r(UPPER + DIGITS, 16)}\t2026-01-01T00:00:00Z\t{aws}", [aws[:20]]),
        (f'{{"Credentials": {{"SecretAccessKey": "{aws}"}}}}', [aws[:20]]),
        (f"--secret-access-key={aws}", [aws[:20]]),
        (f"mysql://root:p@ss{word}@localhost:3306/app", [f"ss{word}"]),
        (f"https://deploy:ab/cd{word}@git.example.com/repo.git", [f"cd{word}"]),
        (f"postgres://app:x{word}@y/{word}z@db.internal:5432/app", [f"x{word}", f"{word}z"]),
        (f"redis://:{word}@cache:6379/0", [word]),
        (f"machine api.heroku.com login me@example.com password {word}", [word]),
        (f"machine github.com\n  login octocat\n  password {word}\n", [word]),
        (f"default login anonymous password {word}", [word]),
        (
            f"https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&sp=r&sig={_pct(sas)}",
            [_pct(sas)[:16]],
        ),
        (
            f"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&sig={_pct(sas)}",
            [_pct(sas)[:16]],
        ),
        (f'{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{docker}"}}}}}}', [docker]),
        (f"password: {letters}", [letters]),
        (f"  db_password: {letters}\n  user: admin", [letters]),
        (f"- secret: {letters}", [letters]),
        (f"smtp:\n  password: {letters.capitalize()}", [letters.capitalize()]),
    ]


SHAPES = _shapes()

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
    "failed to synthesize instDecidableEqProdNatOfDecidableEq2",
    "instance instReprFinsetOfDecidableEqOfRepr3 : Repr (Finset Nat)",
    "unexpected token 'at'; expected term",
    "token Lean.Parser.Term.byTactic was not expected here",
    "the token count is 1234567890123456",
    "LEAN_NUM_THREADS=4 lake build",
    "CI=true LEAN_ABORT_ON_PANIC=1",
    "http://localhost:8080/search?q=user@example.com",
    "https://user@example.com/path is a URL with a user and no password",
    "mailto:someone@example.com",
    "Mathlib/Algebra/Order/Ring/Lemmas2.lean",
    "https://github.com/leanprover/lean4/blob/master/src/Init/Prelude3.lean",
    "see src/Lean/Elab/Tactic/BuiltinTactic2.lean",
    '"auth": null',
    '"author": "Jane Doe"',
    "machine learning is not a password manager",
    "the password field must not be empty",
    "sig : Signature := default",
    "commit 3F2A1B4C5D6E7F8091A2B3C4D5E6F708192A3B4C",
    "theorem foo (h : a = b) : b = a := h.symm",
    "aGVsbG8gd29ybGQ=",
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


@pytest.mark.parametrize(("text", "parts"), SHAPES, ids=[str(i) for i in range(len(SHAPES))])
def test_secrets_outside_name_equals_value_are_redacted(text: str, parts: list[str]) -> None:
    out = redact(text, home="/nonexistent-home")
    assert MARK in out, out
    for part in parts:
        assert part not in out, (part, out)
    assert redact_value({"evidence": [text]}, home="/h")["evidence"][0] == out


def test_the_corpora_are_big_enough() -> None:
    assert len(SECRETS) >= 30 and len(SHAPES) >= 20 and len(LOOK_ALIKES) >= 55


def test_random_secrets_of_every_alphabet_are_redacted() -> None:
    """The catch-all for unknown formats: 2,000 random strings per shape, none may survive
    (the rule's leak rate is about 2 in 10,000 at 32 characters, so this seed is checked)."""
    rng = random.Random(29)
    for alphabet in (ALNUM, ALNUM + "+/", ALNUM + "_-"):
        for length in (32, 40, 64):
            for _ in range(2000):
                secret = r(UPPER, 1) + r(LOWER, 1) + r(DIGITS, 1)
                secret += "".join(rng.choice(alphabet) for _ in range(length - 3))
                secret = "".join(rng.sample(secret, len(secret)))
                out = redact(f"value {secret} here", home="/h")
                assert secret not in out, secret


def test_values_under_secret_keys_go_whole() -> None:
    value = {
        "auths": {"https://index.docker.io/v1/": {"auth": "YWxpY2U6c2VjcmV0"}},
        "password": "hunter",
        "db": {"client_secret": "abc", "user": "alice", "token_count": 3},
        "auth": None,
    }
    out = redact_value(value, home="/h")
    assert out["auths"]["https://index.docker.io/v1/"]["auth"] == MARK
    assert out["password"] == MARK and out["db"]["client_secret"] == MARK
    assert out["db"]["user"] == "alice" and out["db"]["token_count"] == 3
    assert out["auth"] is None


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


def _report(server: Server, rid: int, root: Path, **fields: object) -> dict:
    args = {
        "workspace": {"root": str(root)},
        "title": "a report",
        "summary": "s",
        "reproduction": "r",
        "expected": "e",
        "actual": "a",
        **fields,
    }
    reply = server.ask(call(rid, "beam_feedback_report", args))
    assert reply["result"]["isError"] is False, reply
    return structured(reply)


def test_every_new_shape_leaks_nowhere_and_the_workspace_root_is_redacted(
    servers: list[Server], tmp_path: Path
) -> None:
    """The shapes that need more than `name = value`, in every field and as evidence (text and
    a Docker config as data), through the real server: not in the answer, not in the files."""
    from tests.support.projects import lean_project

    home = tmp_path / "home"
    project = lean_project(home / "work" / "proj", {"Main.lean": "def a := 1\n"})
    server = start(servers, HOME=str(home))
    texts = [text for text, _ in SHAPES]
    docker = {"auths": {"https://index.docker.io/v1/": {"auth": "YWxpY2U6" + mixed(16)}}}
    body = _report(
        server,
        1,
        project,
        title="shapes",
        summary="\n".join(texts[:7]),
        reproduction="\n".join(texts[7:14]),
        actual="\n".join(texts[14:]),
        tags=texts[:3],
        evidence=[{"name": "docker", "content": docker}, {"name": "all", "content": texts}],
        bundle="dir",
        include_collected=True,
    )
    folder = Path(body["bundle_dir"])
    written = "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    shown = json.dumps({key: value for key, value in body.items() if key != "bundle_dir"})
    secrets = [part for _, parts in SHAPES for part in parts]
    secrets.append(docker["auths"]["https://index.docker.io/v1/"]["auth"])
    for secret in secrets:
        assert secret not in shown, secret
        assert secret not in written, secret
    assert body["workspace"]["root"] == "~/work/proj", body["workspace"]
    assert str(home) not in shown and str(home) not in written


@pytest.mark.parametrize("bundle", ["dir", "zip"])
def test_reports_with_the_same_title_in_one_second_keep_both(
    servers: list[Server], project: Path, tmp_path: Path, bundle: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    server = start(servers, HOME=str(home))
    key = "bundle_dir" if bundle == "dir" else "zip_path"
    places = [_report(server, rid, project, bundle=bundle, summary=f"report {rid}")[key]
              for rid in range(1, 5)]  # fmt: skip
    assert len(set(places)) == 4, places
    for rid, place in enumerate(places, start=1):
        path = Path(place)
        if bundle == "dir":
            text = (path / "report.md").read_text()
        else:
            import zipfile

            text = zipfile.ZipFile(path).read("report.md").decode()
        assert f"report {rid}" in text, (place, text)
