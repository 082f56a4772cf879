"""Talking to an OpenAI-compatible endpoint, knowing nothing of judges, prompts, metrics or verdicts: the
``openai`` client object, retry classification and backoff, the process's rate limiter per endpoint and
model, key redaction, usage accounting, the Batch API's wire format and structured (JSON Schema)
replies. The judge builds on it.
"""
