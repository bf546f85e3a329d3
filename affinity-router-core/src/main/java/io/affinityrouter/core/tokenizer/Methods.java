package io.affinityrouter.core.tokenizer;

import static io.affinityrouter.core.tokenizer.Interpreter.asLong;
import static io.affinityrouter.core.tokenizer.Interpreter.iterate;
import static io.affinityrouter.core.tokenizer.Interpreter.pyEquals;
import static io.affinityrouter.core.tokenizer.Interpreter.str;

import io.affinityrouter.core.tokenizer.ChatTemplate.TemplateException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** The methods of Python's {@code str}, {@code dict} and {@code list} a sandboxed template may call. */
final class Methods {
  private Methods() {}

  static @Nullable Object call(Object self, String name, List<Object> args,
      Map<String, Object> kw) {
    if (self instanceof String s) {
      return onString(s, name, args, kw);
    }
    if (self instanceof Map<?, ?> m) {
      switch (name) {
        case "items" -> {
          List<Object> items = new ArrayList<>(m.size());
          m.forEach((k, v) -> items.add(new Interpreter.Tuple(java.util.Arrays.asList(k, v))));
          return new Interpreter.DictView("items", items);
        }
        case "keys" -> {
          return new Interpreter.DictView("keys", m.keySet());
        }
        case "values" -> {
          return new Interpreter.DictView("values", m.values());
        }
        default -> {
          Object key = arg(args, kw, 0, "key", null);
          return m.containsKey(key) ? m.get(key) : arg(args, kw, 1, "default", null);
        }
      }
    }
    List<?> l = (List<?>) self;
    Object needle = args.isEmpty() ? null : args.get(0);
    int count = 0;
    for (int i = 0; i < l.size(); i++) {
      if (pyEquals(l.get(i), needle)) {
        if (name.equals("index")) {
          return (long) i;
        }
        count++;
      }
    }
    if (name.equals("index")) {
      throw new TemplateException("list.index(x): x not in list");
    }
    return (long) count;
  }

  private static @Nullable Object onString(String s, String name, List<Object> args,
      Map<String, Object> kw) {
    switch (name) {
      case "startswith", "endswith" -> {
        Object affix = args.isEmpty() ? null : args.get(0);
        List<Object> options = affix instanceof List<?> ? iterate(affix) : List.of(str(affix));
        for (Object o : options) {
          String a = str(o);
          if (name.equals("startswith") ? s.startsWith(a) : s.endsWith(a)) {
            return true;
          }
        }
        return false;
      }
      case "split", "rsplit" -> {
        Object sep = arg(args, kw, 0, "sep", null);
        Object max = arg(args, kw, 1, "maxsplit", -1L);
        String separator = sep == null ? null : str(sep);
        return name.equals("split") ? PyStrings.split(s, separator, asLong(max))
            : PyStrings.rsplit(s, separator, asLong(max));
      }
      case "strip", "lstrip", "rstrip" -> {
        Object chars = arg(args, kw, 0, "chars", null);
        return PyStrings.strip(s, chars == null ? null : str(chars), !name.equals("rstrip"),
            !name.equals("lstrip"));
      }
      case "upper" -> {
        return s.toUpperCase();
      }
      case "lower" -> {
        return s.toLowerCase();
      }
      case "title" -> {
        return PyStrings.title(s);
      }
      case "capitalize" -> {
        return PyStrings.capitalize(s);
      }
      case "replace" -> {
        Object count = arg(args, kw, 2, "count", -1L);
        return PyStrings.replace(s, str(args.get(0)), str(args.get(1)), asLong(count));
      }
      case "join" -> {
        StringBuilder b = new StringBuilder();
        List<Object> items = iterate(args.get(0));
        for (int i = 0; i < items.size(); i++) {
          if (!(items.get(i) instanceof String part)) {
            throw new TemplateException("sequence item " + i + ": expected str instance");
          }
          b.append(i == 0 ? "" : s).append(part);
        }
        return b.toString();
      }
      case "find" -> {
        return (long) s.indexOf(str(args.get(0)));
      }
      case "rfind" -> {
        return (long) s.lastIndexOf(str(args.get(0)));
      }
      case "count" -> {
        String sub = str(args.get(0));
        if (sub.isEmpty()) {
          return (long) s.length() + 1;
        }
        long n = 0;
        for (int k = s.indexOf(sub); k >= 0; k = s.indexOf(sub, k + sub.length())) {
          n++;
        }
        return n;
      }
      case "splitlines" -> {
        List<Object> lines = new ArrayList<>();
        for (String line : s.split("\r\n|[\n\r\u000b\u000c\u001c\u001d\u001e\u0085\u2028\u2029]",
            -1)) {
          lines.add(line);
        }
        if (!lines.isEmpty() && ((String) lines.get(lines.size() - 1)).isEmpty()) {
          lines.remove(lines.size() - 1);
        }
        return lines;
      }
      default -> {
        return classify(s, name);
      }
    }
  }

  private static boolean classify(String s, String name) {
    if (s.isEmpty()) {
      return false;
    }
    boolean cased = false;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = switch (name) {
        case "isdigit" -> Character.isDigit(c);
        case "isalpha" -> Character.isLetter(c);
        case "isalnum" -> Character.isLetterOrDigit(c);
        case "isspace" -> PyStrings.isSpace(c);
        case "isupper" -> !Character.isLowerCase(c);
        default -> !Character.isUpperCase(c);
      };
      cased |= Character.isLetter(c);
      if (!ok) {
        return false;
      }
    }
    return !(name.equals("isupper") || name.equals("islower")) || cased;
  }

  private static @Nullable Object arg(List<Object> args, Map<String, Object> kw, int position,
      String keyword, @Nullable Object fallback) {
    if (kw.containsKey(keyword)) {
      return kw.get(keyword);
    }
    return position < args.size() ? args.get(position) : fallback;
  }
}
