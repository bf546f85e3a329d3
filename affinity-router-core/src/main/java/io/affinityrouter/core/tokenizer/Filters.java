package io.affinityrouter.core.tokenizer;

import static io.affinityrouter.core.tokenizer.Interpreter.asLong;
import static io.affinityrouter.core.tokenizer.Interpreter.getItem;
import static io.affinityrouter.core.tokenizer.Interpreter.isInteger;
import static io.affinityrouter.core.tokenizer.Interpreter.isNumber;
import static io.affinityrouter.core.tokenizer.Interpreter.iterate;
import static io.affinityrouter.core.tokenizer.Interpreter.pyEquals;
import static io.affinityrouter.core.tokenizer.Interpreter.requireDefined;
import static io.affinityrouter.core.tokenizer.Interpreter.str;
import static io.affinityrouter.core.tokenizer.Interpreter.truthy;

import io.affinityrouter.core.tokenizer.ChatTemplate.TemplateException;
import io.affinityrouter.core.tokenizer.Interpreter.Undefined;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Jinja2's filters and tests that chat templates use, {@code tojson} as transformers defines it. */
final class Filters {
  private Filters() {}

  static @Nullable Object apply(String name, @Nullable Object v, List<Object> args,
      List<String> kwNames, List<Object> kwValues) {
    switch (name) {
      case "tojson" -> {
        Object indent = arg(args, kwNames, kwValues, 1, "indent", null);
        Object sortKeys = arg(args, kwNames, kwValues, 3, "sort_keys", false);
        Object ensureAscii = arg(args, kwNames, kwValues, 0, "ensure_ascii", false);
        Object separators = arg(args, kwNames, kwValues, 2, "separators", null);
        return Json.dumps(v, indent == null ? -1 : (int) asLong(indent), truthy(sortKeys),
            truthy(ensureAscii), separators);
      }
      case "trim" -> {
        Object chars = arg(args, kwNames, kwValues, 0, "chars", null);
        return PyStrings.strip(str(v), chars == null ? null : str(chars), true, true);
      }
      case "length", "count" -> {
        return (long) length(v);
      }
      case "string" -> {
        return str(v);
      }
      case "safe", "e", "escape" -> {
        requireDefined(v);
        return name.equals("safe") ? v : escape(str(v));
      }
      case "lower" -> {
        return str(v).toLowerCase();
      }
      case "upper" -> {
        return str(v).toUpperCase();
      }
      case "capitalize" -> {
        return PyStrings.capitalize(str(v));
      }
      case "title" -> {
        return PyStrings.title(str(v));
      }
      case "replace" -> {
        Object count = arg(args, kwNames, kwValues, 2, "count", null);
        return PyStrings.replace(str(v), str(args.get(0)), str(args.get(1)),
            count == null ? -1 : asLong(count));
      }
      case "default", "d" -> {
        Object fallback = arg(args, kwNames, kwValues, 0, "default_value", "");
        boolean bool = truthy(arg(args, kwNames, kwValues, 1, "boolean", false));
        return v instanceof Undefined || (bool && !truthy(v)) ? fallback : v;
      }
      case "first", "last" -> {
        List<Object> items = iterate(v);
        if (items.isEmpty()) {
          return new Undefined(name);
        }
        return items.get(name.equals("first") ? 0 : items.size() - 1);
      }
      case "list" -> {
        return iterate(v);
      }
      case "reverse" -> {
        if (v instanceof String s) {
          return new StringBuilder(s).reverse().toString();
        }
        List<Object> items = iterate(v);
        Collections.reverse(items);
        return items;
      }
      case "join" -> {
        String sep = str(arg(args, kwNames, kwValues, 0, "d", ""));
        Object attribute = arg(args, kwNames, kwValues, 1, "attribute", null);
        StringBuilder b = new StringBuilder();
        List<Object> items = iterate(v);
        for (int i = 0; i < items.size(); i++) {
          Object item = attribute == null ? items.get(i) : getItem(items.get(i), attribute);
          b.append(i == 0 ? "" : sep).append(str(item));
        }
        return b.toString();
      }
      case "items" -> {
        if (v == null) { // Jinja2 raises a TypeError too
          throw new TemplateException("'NoneType' object has no attribute 'items'");
        }
        return Methods.call(v, "items", List.of(), Map.of());
      }
      case "int" -> {
        return toInt(v, arg(args, kwNames, kwValues, 0, "default", 0L));
      }
      case "float" -> {
        return toFloat(v, arg(args, kwNames, kwValues, 0, "default", 0.0));
      }
      case "abs" -> {
        return v instanceof Double d ? (Object) Math.abs(d) : (Object) Math.abs(asLong(v));
      }
      case "unique" -> {
        return new ArrayList<>(new LinkedHashSet<>(iterate(v)));
      }
      case "selectattr", "rejectattr" -> {
        boolean select = name.equals("selectattr");
        List<Object> kept = new ArrayList<>();
        for (Object item : iterate(v)) {
          Object attr = getItem(item, args.get(0));
          boolean pass = args.size() < 2 ? truthy(attr)
              : test(str(args.get(1)), attr, args.subList(2, args.size()));
          if (pass == select) {
            kept.add(item);
          }
        }
        return kept;
      }
      case "select", "reject" -> {
        boolean select = name.equals("select");
        List<Object> kept = new ArrayList<>();
        for (Object item : iterate(v)) {
          boolean pass = args.isEmpty() ? truthy(item)
              : test(str(args.get(0)), item, args.subList(1, args.size()));
          if (pass == select) {
            kept.add(item);
          }
        }
        return kept;
      }
      case "map" -> {
        Object attribute = arg(List.of(), kwNames, kwValues, 0, "attribute", null);
        List<Object> mapped = new ArrayList<>();
        for (Object item : iterate(v)) {
          mapped.add(attribute != null ? getItem(item, attribute)
              : apply(str(args.get(0)), item, args.subList(1, args.size()), List.of(), List.of()));
        }
        return mapped;
      }
      default -> throw new TemplateException("unsupported filter '" + name + "'");
    }
  }

  static boolean test(String name, @Nullable Object v, List<Object> args) {
    return switch (name) {
      case "defined" -> !(v instanceof Undefined);
      case "undefined" -> v instanceof Undefined;
      case "none" -> v == null;
      case "string" -> v instanceof String;
      case "number" -> isNumber(v);
      case "integer" -> isInteger(v) && !(v instanceof Boolean);
      case "float" -> v instanceof Double;
      case "boolean" -> v instanceof Boolean;
      case "true" -> Boolean.TRUE.equals(v);
      case "false" -> Boolean.FALSE.equals(v);
      case "mapping" -> v instanceof Map;
      case "sequence" -> v instanceof List || v instanceof String || v instanceof Map;
      case "iterable" -> v instanceof List || v instanceof String || v instanceof Map
          || v instanceof Undefined;
      case "callable" -> v instanceof Interpreter.Bound || v instanceof Interpreter.Function;
      case "odd" -> asLong(v) % 2 != 0;
      case "even" -> asLong(v) % 2 == 0;
      case "divisibleby" -> asLong(v) % asLong(args.get(0)) == 0;
      case "eq", "equalto", "==" -> pyEquals(v, args.get(0));
      case "ne", "!=" -> !pyEquals(v, args.get(0));
      case "in" -> Interpreter.contains(args.get(0), v);
      case "lower" -> str(v).equals(str(v).toLowerCase());
      case "upper" -> str(v).equals(str(v).toUpperCase());
      case "sameas" -> v == args.get(0) || (v != null && isSingleton(v) && v.equals(args.get(0)));
      default -> throw new TemplateException("unsupported test '" + name + "'");
    };
  }

  private static boolean isSingleton(Object v) {
    return v instanceof Boolean;
  }

  private static @Nullable Object arg(List<Object> args, List<String> kwNames,
      List<Object> kwValues, int position, String keyword, @Nullable Object fallback) {
    int k = kwNames.indexOf(keyword);
    if (k >= 0) {
      return kwValues.get(k);
    }
    return position < args.size() ? args.get(position) : fallback;
  }

  static int length(@Nullable Object v) {
    if (v instanceof String s) {
      return s.codePointCount(0, s.length());
    }
    if (v instanceof List<?> l) {
      return l.size();
    }
    if (v instanceof Map<?, ?> m) {
      return m.size();
    }
    if (v instanceof Undefined) {
      return 0;
    }
    throw new TemplateException("object of type '" + Interpreter.typeName(v) + "' has no len()");
  }

  private static @Nullable Object toInt(@Nullable Object v, @Nullable Object fallback) {
    if (isInteger(v)) {
      return asLong(v);
    }
    if (v instanceof Double d) {
      return (long) (double) d;
    }
    try {
      return Long.parseLong(str(v).strip());
    } catch (NumberFormatException e) {
      try {
        return (long) Double.parseDouble(str(v).strip());
      } catch (NumberFormatException e2) {
        return fallback;
      }
    }
  }

  private static @Nullable Object toFloat(@Nullable Object v, @Nullable Object fallback) {
    if (isNumber(v)) {
      return Interpreter.asDouble(v);
    }
    try {
      return Double.parseDouble(str(v).strip());
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace("\"", "&#34;").replace("'", "&#39;");
  }
}
