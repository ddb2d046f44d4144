"""``beam_feedback_report``: the local report card (``feedback``) and its redaction (``redact``)."""
