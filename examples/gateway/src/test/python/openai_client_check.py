"""Talks to the gateway with the official openai Python client, as an application would.

Usage: python openai_client_check.py BASE_URL MODEL
Exits non-zero with the failed assertion; prints "ok" when every check passed.
"""
import sys

import openai


def main(base_url: str, model: str) -> None:
    client = openai.OpenAI(base_url=base_url + "/v1", api_key="unused", timeout=30)
    session = {"x-session-id": "openai-python-1"}
    messages = [{"role": "user", "content": "Hello, which replica holds my cache?"}]

    ids = [m.id for m in client.models.list()]
    assert model in ids, f"models.list(): {ids}"

    reply = client.chat.completions.create(
        model=model, messages=messages, max_tokens=4, extra_headers=session)
    assert reply.choices[0].message.content, reply
    assert reply.usage is not None and reply.usage.completion_tokens == 4, reply.usage

    chunks = list(client.chat.completions.create(
        model=model, messages=messages, max_tokens=3, stream=True,
        stream_options={"include_usage": True}, extra_headers=session))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text, chunks
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 3, chunks[-1]

    plain = list(client.chat.completions.create(
        model=model, messages=messages, max_tokens=3, stream=True, extra_headers=session))
    assert all(c.usage is None for c in plain), "usage sent without include_usage"

    try:
        client.chat.completions.create(
            model="no-such-model", messages=messages, max_tokens=2, extra_headers=session)
        raise AssertionError("an unknown model was answered")
    except openai.NotFoundError as e:
        assert e.status_code == 404, e.status_code
        assert e.code == "model_not_found", e.code
        assert e.param == "model", e.param

    print("models", ids)
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
