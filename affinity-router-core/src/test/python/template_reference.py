"""Renders Jinja chat-template snippets as transformers does, for ChatTemplateReferenceTest.

Reads one JSON object per line on stdin, {"template": ..., "context": {...}}, and writes one per
line: {"output": ...} or {"error": <exception type>}. The environment is transformers' own
(_compile_jinja_template: sandboxed, trim_blocks, lstrip_blocks, loopcontrols, its tojson,
raise_exception and strftime_now).
"""
import json
import sys

from transformers.utils.chat_template_utils import _compile_jinja_template

for line in sys.stdin:
    case = json.loads(line)
    try:
        out = {"output": _compile_jinja_template(case["template"]).render(**case["context"])}
    except Exception as e:
        out = {"error": type(e).__name__}
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    sys.stdout.flush()
