"""Reference token ids for InProcessTokenizerReferenceTest: transformers' own chat-template
rendering and tokenizer, as vLLM's POST /tokenize computes them.

Usage: chat_reference.py MODEL_DIR COUNT SEED > cases.jsonl

MODEL_DIR holds tokenizer.json and tokenizer_config.json (with a chat_template). Writes COUNT
JSON lines, each a conversation drawn from SEED (or a completion prompt) with the flags it was
rendered with and the reference ids: chats rendered with apply_chat_template(tokenize=False)
and encoded without special tokens, completions encoded with them (vLLM's defaults).
A conversation the template rejects is written with "error" instead of ids.
"""
import json
import random
import sys

from transformers import PreTrainedTokenizerFast

WORDS = ["the", "cache", "replica", "token", "session", "GPU", "router", "  spaced  ", "tab\there",
         "naïve", "café", "日本語", "中文测试", "Привет", "emoji😀", "🚀🔥", "a\u00a0b", "x\u200by",
         "<tool_response>", "</tool_response>", "<think>", "</think>", "<|im_start|>", "<|eot_id|>",
         "{\"json\": [1, 2]}", "def f(x):\n    return x", "\\n", "'quote'", "\"dq\"", "100%", "{{ x }}",
         "{% if %}", "\r\n", "...", "!!", "ÀÉÎÕÜ", "ß", "İ", "ﬁ", "\u0301e", "0.5", "-1", "   ", "\n\n"]


def text(rng, lo=0, hi=40):
    n = rng.randint(lo, hi)
    s = " ".join(rng.choice(WORDS) for _ in range(n))
    if rng.random() < 0.2:
        s = rng.choice(["\n", " ", "  \n", "\t"]) + s
    if rng.random() < 0.2:
        s = s + rng.choice(["\n", " ", "\n\n", "\t "])
    return s


def assistant(rng):
    s = text(rng, 1, 30)
    if rng.random() < 0.3:
        s = "<think>\n" + text(rng, 0, 15) + "\n</think>\n\n" + s
    return s


def conversation(rng):
    messages = []
    if rng.random() < 0.6:
        messages.append({"role": "system", "content": text(rng, 0, 30)})
    for turn in range(rng.randint(1, 6)):
        messages.append({"role": "user", "content": text(rng, 1, 50)})
        if rng.random() < 0.15:
            messages.append({"role": "assistant", "content": assistant(rng)})
            for _ in range(rng.randint(1, 2)):
                messages.append({"role": "tool",
                                 "content": rng.choice(["", "<tool_response>"]) + text(rng, 1, 20)})
        messages.append({"role": "assistant", "content": assistant(rng)})
    if rng.random() < 0.7:
        messages.pop()
    if rng.random() < 0.05:
        messages.insert(rng.randint(1, len(messages)), {"role": "system", "content": text(rng)})
    return messages


def main():
    model_dir, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    tok = PreTrainedTokenizerFast.from_pretrained(model_dir)
    rng = random.Random(seed)
    out = sys.stdout
    for i in range(count):
        if rng.random() < 0.1:
            prompt = text(rng, 0, 80)
            ids = tok(prompt, add_special_tokens=True)["input_ids"]
            out.write(json.dumps({"prompt": prompt, "ids": ids}, ensure_ascii=False) + "\n")
            continue
        messages = conversation(rng)
        last_is_assistant = messages[-1]["role"] == "assistant"
        continue_final = last_is_assistant and rng.random() < 0.5
        add_generation = not continue_final and rng.random() < 0.9
        case = {"messages": messages, "add_generation_prompt": add_generation,
                "continue_final_message": continue_final}
        try:
            rendered = tok.apply_chat_template(messages, tokenize=False,
                                               add_generation_prompt=add_generation,
                                               continue_final_message=continue_final)
            case["ids"] = tok(rendered, add_special_tokens=False)["input_ids"]
        except Exception as e:  # the template or the continuation check rejected it
            case["error"] = type(e).__name__
        out.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
