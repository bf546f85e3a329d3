package io.affinityrouter.core.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.affinityrouter.core.tokenizer.ChatTemplate.TemplateException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The renderer against Jinja2 in transformers' own environment
 * ({@code src/test/python/template_reference.py}): each snippet exercises one construct chat
 * templates use (whitespace control, scoping, Python values and methods, filters, tests, loop
 * variables, undefined values, errors), and must render exactly as the reference renders it, or
 * fail where the reference raises. Python comes from {@code -Dtokenizer.python},
 * {@code $TOKENIZER_PYTHON} or {@code ../.tokenizer-venv/bin/python} ({@code .ci/run} makes it);
 * without it the test fails when {@code CI=true}, and is skipped elsewhere.
 */
class ChatTemplateReferenceTest {
  private static final String M = "{\"messages\": [{\"role\": \"system\", \"content\": \" sys \\n\"},"
      + " {\"role\": \"user\", \"content\": \"hi <think>a</think>\\n\\nb\"},"
      + " {\"role\": \"assistant\", \"content\": \"x\", \"extra\": null}],"
      + " \"add_generation_prompt\": true, \"tools\": null, \"bos_token\": \"<s>\","
      + " \"n\": 7, \"f\": 2.5, \"s\": \"  Hello World  \", \"d\": {\"b\": 1, \"a\": [1, \"x\"]}}";

  private static final List<String> SNIPPETS = List.of(
      // whitespace control, trim_blocks, lstrip_blocks
      "a\n  {% if true %}\n  b\n  {% endif %}\nc",
      "a  {%- if true -%}  b  {%- endif -%}  c",
      "{{ 'x' }}\n{{ 'y' }}\n",
      "  {{- 'x' -}}  \n  y",
      "{% if true +%}\nkeep\n  {%+ endif %}z",
      "x {# comment #}\ny\n  {#- c -#}  z",
      "{%- for m in messages %}\n  [{{ m.role }}]\n{%- endfor %}\n",
      "line\r\n{% if true %}\r\nwin{% endif %}",
      // values and printing
      "{{ none }}|{{ true }}|{{ false }}|{{ 1 }}|{{ 2.0 }}|{{ 1.5e20 }}|{{ 0.1 + 0.2 }}|{{ 1e-7 }}",
      "{{ [1, 'a', none, true] }}|{{ {'k': 'v', 'n': 1} }}|{{ (1, 2) }}|{{ \"it's\" }}",
      "{{ 'a\\tb\\n' }}{{ \"\\u00e9\\x41\" }}{{ 'c' 'd' }}",
      "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 'ab' * 3 }}",
      "{{ n + f }} {{ n - 10 }} {{ -n }} {{ 'a' ~ 1 ~ none }} {{ [1] + [2] }}",
      "{{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 2 >= 2 }}",
      "{{ 'a' in 'cat' }} {{ 1 in [1, 2] }} {{ 'b' in d }} {{ 'z' not in d }} {{ 3 not in [1] }}",
      "{{ (1 if n > 5 else 2) }} {{ 'y' if false }}|{{ none or 'dflt' }} {{ 0 and 'x' }} {{ 1 and 'x' }}",
      "{{ not none }} {{ not [] }} {{ not 'a' }} {{ not 0.0 }}",
      // attribute and item access, methods
      "{{ messages[0].role }} {{ messages[-1]['content'] }} {{ d.a[1] }} {{ d['a'].1 }}",
      "{{ messages[9] }}|{{ d.missing }}|{{ messages[0].nope is defined }}|{{ m is defined }}",
      "{{ messages[1].content.split('</think>')[-1].lstrip('\\n') }}|{{ s.strip() }}|{{ s.rstrip() }}|",
      "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a-b-c'.rsplit('-', 1) }}",
      "{{ s.upper() }} {{ s.lower() }} {{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }}",
      "{{ 'xxhixx'.strip('x') }} {{ 'aXbX'.replace('X', '-') }} {{ 'aaa'.replace('a', 'b', 2) }}",
      "{{ 'abc'.startswith('a') }} {{ 'abc'.endswith(('x', 'c')) }} {{ '-'.join(['a', 'b']) }}",
      "{{ 'banana'.find('an') }} {{ 'banana'.rfind('an') }} {{ 'banana'.count('a') }} {{ '12'.isdigit() }}",
      "{{ 'hello'[1:3] }} {{ 'hello'[::-1] }} {{ [1,2,3,4][1:] }} {{ [1,2,3,4][:-1] }} {{ [1,2,3,4][::2] }}",
      "{{ messages[::-1][0].role }} {{ messages[1:][0].role }} {{ 'abc'[-1] }}",
      "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{{ d.keys() }}{{ d.get('b') }}{{ d.get('q', 3) }}",
      // filters
      "{{ s|trim }}|{{ messages|length }}|{{ s|length }}|{{ 'x'|upper }}|{{ 'ab'|reverse }}|{{ [1,2]|reverse|list }}",
      "{{ d|tojson }}|{{ d|tojson(indent=2) }}|{{ messages|tojson }}|{{ 'é\"\\n'|tojson }}",
      "{{ d|tojson(sort_keys=true) }}|{{ [1.0, 2.5, true, none]|tojson }}|{{ {'a': {}}|tojson(indent=4) }}",
      "{{ missing|default('dflt') }}|{{ ''|default('e', true) }}|{{ none|default('n') }}|{{ missing|d('x') }}",
      "{{ messages|map(attribute='role')|join(', ') }}|{{ messages|selectattr('role', 'equalto', 'user')|list|length }}",
      "{{ messages|rejectattr('role', 'equalto', 'user')|map(attribute='role')|list }}|{{ [1,0,2]|select|list }}",
      "{{ messages|first }}|{{ (messages|last).role }}|{{ [3, 1, 3]|unique|list }}|{{ '5'|int + 1 }}|{{ 'x'|int }}",
      "{{ -3|abs }}|{{ '2.5'|float }}|{{ 'a b'|title }}|{{ '<b>'|e }}|{{ 1|string ~ 2 }}|{{ 'hello'|replace('l', 'L') }}",
      "{{ messages|join(attribute='role') }}|{{ [1, 2]|join }}|{{ messages|length - 1 }}",
      // tests
      "{{ none is none }} {{ 1 is none }} {{ 's' is string }} {{ 1 is number }} {{ 1 is integer }} {{ 1.0 is float }}",
      "{{ false is false }} {{ 0 is false }} {{ true is true }} {{ d is mapping }} {{ [] is iterable }} {{ 3 is odd }}",
      "{{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 1 is eq 1 }} {{ 'a' is in 'abc' }}",
      "{{ messages[2].extra is none }} {{ messages[2].extra is defined }} {{ x is not defined }} {{ 'A' is upper }}",
      // loops
      "{% for m in messages %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}|{% endfor %}",
      "{% for m in messages if m.role != 'system' %}{{ loop.index }}:{{ m.role }} {% endfor %}",
      "{% for m in [] %}x{% else %}empty{% endfor %}{% for c in 'ab' %}{{ c }}{% endfor %}{% for x in missing %}y{% endfor %}",
      "{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}",
      "{% for i in range(1, 10, 3) %}{{ i }}{% endfor %}{% for i in range(3, 0, -1) %}{{ i }}{% endfor %}",
      "{% for m in messages %}{{ loop.previtem.role if not loop.first }}>{{ loop.nextitem is defined }};{% endfor %}",
      "{% for a in [[1, 2], [3, 4]] %}{% for b in a %}{{ loop.index }}{{ b }}{% endfor %}{% endfor %}",
      // scoping and namespace
      "{% set x = 1 %}{% for m in messages %}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}",
      "{% set ns = namespace(c=0, last=none) %}{% for m in messages %}{% set ns.c = ns.c + 1 %}{% set ns.last = m.role %}{% endfor %}{{ ns.c }}{{ ns.last }}",
      "{% if true %}{% set y = 'in-if' %}{% endif %}{{ y }}{% set a, b = 1, 2 %}{{ a }}{{ b }}",
      "{% set t %}block {{ n }}{% endset %}[{{ t }}]{% set m2 = messages %}{{ m2|length }}",
      "{% for m in messages %}{% set m = m.role %}{{ m }}{% endfor %}",
      // the generation tag and globals
      "{% generation %}gen {{ n }}{% endgeneration %}",
      "{{ raise_exception('nope') }}",
      "{{ dict(a=1, b='x') }} {{ namespace(a=1).a }} {{ range(3)|list }}",
      // undefined semantics and errors
      "{{ missing }}|{{ missing|length }}|{{ missing is defined }}|{{ 'x' ~ missing }}|{{ missing == missing }}",
      "{{ missing + 1 }}",
      "{{ missing.attr }}",
      "{{ 'a' + 1 }}",
      "{{ 1 / 0 }}",
      "{{ 'x' in 1 }}",
      "{% set n.x = 1 %}",
      "{{ bos_token + messages[0]['content'] | trim + '|' }}{{ messages[0].content|trim|length }}",
      "{%- if messages[0]['role'] == 'system' %}{%- set rest = messages[1:] %}{%- else %}{%- set rest = messages %}{%- endif %}{{ rest|length }}",
      "{{ messages[0]['content'].strip() ~ (messages|length > 2)|string }}");

  @Test
  void everySnippetRendersAsJinja2InTransformers() throws Exception {
    String python = InProcessTokenizerReferenceTest.python();
    List<String> expected = reference(python);
    JsonFactory json = new JsonFactory();
    Map<String, Object> context;
    try (JsonParser p = json.createParser(M)) {
      p.nextToken();
      @SuppressWarnings("unchecked")
      Map<String, Object> c = (Map<String, Object>) JsonValues.read(p);
      context = c;
    }
    List<String> mismatches = new ArrayList<>();
    for (int i = 0; i < SNIPPETS.size(); i++) {
      Map<?, ?> want;
      try (JsonParser p = json.createParser(expected.get(i))) {
        p.nextToken();
        want = (Map<?, ?>) JsonValues.read(p);
      }
      String got;
      try {
        got = ChatTemplate.parse(SNIPPETS.get(i)).render(context);
      } catch (TemplateException e) {
        if (!want.containsKey("error")) {
          mismatches.add(i + ": failed (" + e.getMessage() + "), reference " + want);
        }
        continue;
      }
      if (!got.equals(want.get("output"))) {
        mismatches.add(i + ": " + encode(got) + " against " + want);
      }
    }
    assertThat(mismatches).isEmpty();
  }

  private static String encode(String s) {
    return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + "\"";
  }

  private static List<String> reference(String python) throws Exception {
    Process process;
    try {
      process = new ProcessBuilder(python,
          Path.of("src", "test", "python", "template_reference.py").toString())
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      InProcessTokenizerReferenceTest.require(false, python + ": " + e.getMessage());
      throw e;
    }
    try (Writer w = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8)) {
      for (String s : SNIPPETS) {
        w.write("{\"template\": " + encode(s) + ", \"context\": " + M + "}\n");
      }
    }
    List<String> lines = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        lines.add(line);
      }
    }
    if (!process.waitFor(5, TimeUnit.MINUTES)) {
      process.destroyForcibly();
    }
    InProcessTokenizerReferenceTest.require(lines.size() == SNIPPETS.size(),
        python + " with transformers (exit " + process.exitValue() + ")");
    return lines;
  }
}
