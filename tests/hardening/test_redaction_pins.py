"""`name: value` secrets are found on every line of a multi-line text, not only the first."""

from __future__ import annotations

from beam_runtime.broker.feedback.redact import redact_value


def test_colon_secrets_on_later_lines_are_redacted() -> None:
    text = (
        "build log\npassword: hunter2\nnext step\n  db_password: s3cr3t!\n- api_key: ab12cd34\n"
        "client_secret : zz9_top\n"  # a space before the colon: a pattern of its own
    )
    out = redact_value({"notes": text})["notes"]
    for secret in ("hunter2", "s3cr3t!", "ab12cd34", "zz9_top"):
        assert secret not in out, out
    assert out.startswith("build log\n") and "next step" in out
