package io.affinityrouter.core.tokenizer;

import io.affinityrouter.core.tokenizer.ChatTemplate.Binary;
import io.affinityrouter.core.tokenizer.ChatTemplate.Call;
import io.affinityrouter.core.tokenizer.ChatTemplate.Cond;
import io.affinityrouter.core.tokenizer.ChatTemplate.DictExpr;
import io.affinityrouter.core.tokenizer.ChatTemplate.Expr;
import io.affinityrouter.core.tokenizer.ChatTemplate.Filter;
import io.affinityrouter.core.tokenizer.ChatTemplate.For;
import io.affinityrouter.core.tokenizer.ChatTemplate.GetAttr;
import io.affinityrouter.core.tokenizer.ChatTemplate.GetItem;
import io.affinityrouter.core.tokenizer.ChatTemplate.If;
import io.affinityrouter.core.tokenizer.ChatTemplate.ListExpr;
import io.affinityrouter.core.tokenizer.ChatTemplate.Literal;
import io.affinityrouter.core.tokenizer.ChatTemplate.LoopControl;
import io.affinityrouter.core.tokenizer.ChatTemplate.Name;
import io.affinityrouter.core.tokenizer.ChatTemplate.Node;
import io.affinityrouter.core.tokenizer.ChatTemplate.Output;
import io.affinityrouter.core.tokenizer.ChatTemplate.SetBlock;
import io.affinityrouter.core.tokenizer.ChatTemplate.SetVar;
import io.affinityrouter.core.tokenizer.ChatTemplate.Slice;
import io.affinityrouter.core.tokenizer.ChatTemplate.TemplateException;
import io.affinityrouter.core.tokenizer.ChatTemplate.Test;
import io.affinityrouter.core.tokenizer.ChatTemplate.Text;
import io.affinityrouter.core.tokenizer.ChatTemplate.Unary;
import java.time.LocalDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Evaluates a parsed template over JSON-like Java values ({@code String}, {@code Long},
 * {@code Double}, {@code Boolean}, {@code null}, {@code List}, {@code Map}) with Python's
 * semantics, as Jinja2's sandbox evaluates them in {@code transformers}.
 */
final class Interpreter {
  private Interpreter() {}

  /** A name or key that does not exist: falsy, renders as nothing, fails when used as a value. */
  record Undefined(String name) {}

  /** Jinja2's {@code namespace()}: the one object a template may assign attributes on. */
  static final class Namespace extends LinkedHashMap<String, Object> {
    private static final long serialVersionUID = 1L;
  }

  /** A Python tuple: a list that prints with parentheses. */
  static final class Tuple extends ArrayList<Object> {
    private static final long serialVersionUID = 1L;

    Tuple(Collection<?> items) {
      super(items);
    }
  }

  /** A dict's {@code keys()}, {@code values()} or {@code items()}: a list that prints as a view. */
  static final class DictView extends ArrayList<Object> {
    private static final long serialVersionUID = 1L;
    final String kind;

    DictView(String kind, Collection<?> items) {
      super(items);
      this.kind = kind;
    }
  }

  /** A method looked up on a value, called next. */
  record Bound(Object self, String name) {}

  /** A global function. */
  record Function(String name) {}

  private static final class Scope {
    final @Nullable Scope parent;
    final Map<String, Object> vars = new HashMap<>();

    Scope(@Nullable Scope parent) {
      this.parent = parent;
    }

    @Nullable Object lookup(String name) {
      for (Scope s = this; s != null; s = s.parent) {
        Object v = s.vars.get(name);
        if (v != null || s.vars.containsKey(name)) {
          return v;
        }
      }
      return GLOBALS.containsKey(name) ? GLOBALS.get(name) : new Undefined(name);
    }
  }

  private static final Map<String, Object> GLOBALS = Map.of(
      "raise_exception", new Function("raise_exception"),
      "strftime_now", new Function("strftime_now"),
      "namespace", new Function("namespace"),
      "range", new Function("range"),
      "dict", new Function("dict"));

  private static final class LoopSignal extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final boolean isBreak;

    LoopSignal(boolean isBreak) {
      super(null, null, false, false);
      this.isBreak = isBreak;
    }
  }

  private static final LoopSignal BREAK = new LoopSignal(true);
  private static final LoopSignal CONTINUE = new LoopSignal(false);

  static void render(List<Node> body, Map<String, ?> context, StringBuilder out) {
    Scope scope = new Scope(null);
    scope.vars.putAll(context);
    try {
      run(body, scope, out);
    } catch (StackOverflowError e) {
      throw new TemplateException("template nests too deeply");
    } catch (ArithmeticException | ClassCastException | IndexOutOfBoundsException e) {
      throw new TemplateException("template failed: " + e.getClass().getSimpleName());
    }
  }

  private static void run(List<Node> nodes, Scope scope, StringBuilder out) {
    for (Node node : nodes) {
      if (node instanceof Text t) {
        out.append(t.text());
      } else if (node instanceof Output o) {
        out.append(str(eval(o.expr(), scope)));
      } else if (node instanceof If i) {
        boolean done = false;
        for (int k = 0; k < i.conditions().size() && !done; k++) {
          if (truthy(eval(i.conditions().get(k), scope))) {
            run(i.branches().get(k), scope, out);
            done = true;
          }
        }
        if (!done) {
          run(i.otherwise(), scope, out);
        }
      } else if (node instanceof For f) {
        runFor(f, scope, out);
      } else if (node instanceof SetVar s) {
        assign(s, scope);
      } else if (node instanceof SetBlock s) {
        StringBuilder captured = new StringBuilder();
        run(s.body(), scope, captured);
        scope.vars.put(s.name(), captured.toString());
      } else {
        throw ((LoopControl) node).isBreak() ? BREAK : CONTINUE;
      }
    }
  }

  private static void assign(SetVar s, Scope scope) {
    Object value = eval(s.value(), scope);
    if (s.target() instanceof Name n) {
      scope.vars.put(n.name(), value);
      return;
    }
    if (s.target() instanceof ListExpr names) {
      List<String> targets = new ArrayList<>();
      names.items().forEach(e -> targets.add(((Name) e).name()));
      bindTargets(targets, value, scope);
      return;
    }
    GetAttr target = (GetAttr) s.target();
    Object owner = eval(target.target(), scope);
    if (!(owner instanceof Namespace ns)) {
      throw new TemplateException("cannot assign attribute on non-namespace object");
    }
    ns.put(target.name(), value);
  }

  private static void runFor(For f, Scope scope, StringBuilder out) {
    List<Object> items = iterate(eval(f.iterable(), scope));
    if (f.filter() != null) {
      List<Object> kept = new ArrayList<>();
      for (Object item : items) {
        Scope loopScope = new Scope(scope);
        bindTargets(f.targets(), item, loopScope);
        if (truthy(eval(f.filter(), loopScope))) {
          kept.add(item);
        }
      }
      items = kept;
    }
    if (items.isEmpty()) {
      run(f.otherwise(), scope, out);
      return;
    }
    int n = items.size();
    for (int i = 0; i < n; i++) {
      // Jinja2 starts every iteration from the enclosing scope: a set in the body does not carry.
      Scope loopScope = new Scope(scope);
      bindTargets(f.targets(), items.get(i), loopScope);
      loopScope.vars.put("loop", loopInfo(items, i));
      try {
        run(f.body(), loopScope, out);
      } catch (LoopSignal signal) {
        if (signal.isBreak) {
          break;
        }
      }
    }
  }

  private static Map<String, Object> loopInfo(List<Object> items, int i) {
    int n = items.size();
    Map<String, Object> loop = new HashMap<>();
    loop.put("index0", (long) i);
    loop.put("index", (long) i + 1);
    loop.put("revindex0", (long) (n - i - 1));
    loop.put("revindex", (long) (n - i));
    loop.put("first", i == 0);
    loop.put("last", i == n - 1);
    loop.put("length", (long) n);
    loop.put("depth", 1L);
    loop.put("depth0", 0L);
    loop.put("previtem", i > 0 ? items.get(i - 1) : new Undefined("previtem"));
    loop.put("nextitem", i < n - 1 ? items.get(i + 1) : new Undefined("nextitem"));
    return loop;
  }

  private static void bindTargets(List<String> targets, @Nullable Object item, Scope scope) {
    if (targets.size() == 1) {
      scope.vars.put(targets.get(0), item);
      return;
    }
    List<Object> parts = iterate(item);
    if (parts.size() != targets.size()) {
      throw new TemplateException("cannot unpack " + parts.size() + " values into "
          + targets.size() + " names");
    }
    for (int k = 0; k < targets.size(); k++) {
      scope.vars.put(targets.get(k), parts.get(k));
    }
  }

  // ---- expressions -------------------------------------------------------------------------

  private static @Nullable Object eval(Expr expr, Scope scope) {
    if (expr instanceof Literal l) {
      return l.value();
    }
    if (expr instanceof Name n) {
      return scope.lookup(n.name());
    }
    if (expr instanceof GetAttr g) {
      return getAttr(eval(g.target(), scope), g.name());
    }
    if (expr instanceof GetItem g) {
      return getItem(eval(g.target(), scope), eval(g.key(), scope));
    }
    if (expr instanceof Slice s) {
      return slice(eval(s.target(), scope), optional(s.start(), scope),
          optional(s.stop(), scope), optional(s.step(), scope));
    }
    if (expr instanceof Call c) {
      return call(eval(c.callee(), scope), evalAll(c.args(), scope), c.kwNames(),
          evalAll(c.kwValues(), scope));
    }
    if (expr instanceof Filter f) {
      return Filters.apply(f.name(), eval(f.value(), scope), evalAll(f.args(), scope),
          f.kwNames(), evalAll(f.kwValues(), scope));
    }
    if (expr instanceof Test t) {
      return t.negated() != Filters.test(t.name(), eval(t.value(), scope),
          evalAll(t.args(), scope));
    }
    if (expr instanceof Unary u) {
      return unary(u.op(), eval(u.operand(), scope));
    }
    if (expr instanceof Binary b) {
      return binary(b, scope);
    }
    if (expr instanceof Cond c) {
      if (truthy(eval(c.condition(), scope))) {
        return eval(c.then(), scope);
      }
      return c.otherwise() == null ? new Undefined("else") : eval(c.otherwise(), scope);
    }
    if (expr instanceof ListExpr l) {
      List<Object> items = evalAll(l.items(), scope);
      return l.tuple() ? new Tuple(items) : items;
    }
    DictExpr d = (DictExpr) expr;
    Map<Object, Object> m = new LinkedHashMap<>();
    for (int k = 0; k < d.keys().size(); k++) {
      m.put(eval(d.keys().get(k), scope), eval(d.values().get(k), scope));
    }
    return m;
  }

  private static @Nullable Object optional(@Nullable Expr e, Scope scope) {
    return e == null ? null : eval(e, scope);
  }

  private static List<Object> evalAll(List<Expr> exprs, Scope scope) {
    List<Object> values = new ArrayList<>(exprs.size());
    for (Expr e : exprs) {
      values.add(eval(e, scope));
    }
    return values;
  }

  private static Object unary(String op, @Nullable Object v) {
    if (op.equals("not")) {
      return !truthy(v);
    }
    requireDefined(v);
    if (!isNumber(v)) {
      throw new TemplateException("bad operand type for unary " + op + ": " + typeName(v));
    }
    if (op.equals("+")) {
      return v instanceof Boolean b ? (b ? 1L : 0L) : Objects.requireNonNull(v, "v"); // a number
    }
    return v instanceof Double d ? -d : -asLong(v);
  }

  private static @Nullable Object binary(Binary b, Scope scope) {
    String op = b.op();
    Object left = eval(b.left(), scope);
    if (op.equals("and")) {
      return truthy(left) ? eval(b.right(), scope) : left;
    }
    if (op.equals("or")) {
      return truthy(left) ? left : eval(b.right(), scope);
    }
    Object right = eval(b.right(), scope);
    return switch (op) {
      case "==" -> pyEquals(left, right);
      case "!=" -> !pyEquals(left, right);
      case "<" -> compare(left, right) < 0;
      case ">" -> compare(left, right) > 0;
      case "<=" -> compare(left, right) <= 0;
      case ">=" -> compare(left, right) >= 0;
      case "in" -> contains(right, left);
      case "not in" -> !contains(right, left);
      case "~" -> str(left) + str(right);
      default -> arithmetic(op, left, right);
    };
  }

  private static Object arithmetic(String op, @Nullable Object l, @Nullable Object r) {
    requireDefined(l);
    requireDefined(r);
    if (op.equals("+")) {
      if (l instanceof String a && r instanceof String c) {
        return a + c;
      }
      if (l instanceof List<?> a && r instanceof List<?> c) {
        List<Object> joined = new ArrayList<>(a);
        joined.addAll(c);
        return joined;
      }
    }
    if (op.equals("*")) {
      if (l instanceof String s && isInteger(r)) {
        return s.repeat((int) Math.max(0, asLong(r)));
      }
      if (isInteger(l) && r instanceof String s) {
        return s.repeat((int) Math.max(0, asLong(l)));
      }
    }
    if (!isNumber(l) || !isNumber(r)) {
      throw new TemplateException("unsupported operand types for " + op + ": " + typeName(l)
          + " and " + typeName(r));
    }
    boolean floats = l instanceof Double || r instanceof Double;
    if (op.equals("/")) {
      double d = asDouble(r);
      if (d == 0) {
        throw new TemplateException("division by zero");
      }
      return asDouble(l) / d;
    }
    if (floats) {
      double a = asDouble(l);
      double c = asDouble(r);
      return switch (op) {
        case "+" -> a + c;
        case "-" -> a - c;
        case "*" -> a * c;
        case "//" -> Math.floor(a / c);
        case "%" -> a - c * Math.floor(a / c);
        default -> Math.pow(a, c);
      };
    }
    long a = asLong(l);
    long c = asLong(r);
    if ((op.equals("//") || op.equals("%")) && c == 0) {
      throw new TemplateException("division by zero");
    }
    return switch (op) {
      case "+" -> a + c;
      case "-" -> a - c;
      case "*" -> a * c;
      case "//" -> Math.floorDiv(a, c);
      case "%" -> Math.floorMod(a, c);
      default -> c >= 0 ? (Object) (long) Math.pow(a, c) : (Object) Math.pow(a, c);
    };
  }

  // ---- attribute and item access -----------------------------------------------------------

  private static final Set<String> STRING_METHODS = Set.of("startswith", "endswith", "split",
      "rsplit", "strip", "lstrip", "rstrip", "upper", "lower", "title", "capitalize", "replace",
      "join", "find", "rfind", "count", "isdigit", "isalpha", "isalnum", "isspace", "isupper",
      "islower", "splitlines");
  private static final Set<String> DICT_METHODS = Set.of("items", "keys", "values", "get");

  static @Nullable Object getAttr(@Nullable Object obj, String name) {
    requireDefined(obj);
    if (obj instanceof Namespace ns) {
      return ns.containsKey(name) ? ns.get(name) : new Undefined(name);
    }
    if (obj instanceof Map<?, ?> m) {
      if (DICT_METHODS.contains(name)) {
        return new Bound(obj, name);
      }
      return m.containsKey(name) ? m.get(name) : new Undefined(name);
    }
    if (obj instanceof String && STRING_METHODS.contains(name)) {
      return new Bound(obj, name);
    }
    if (obj instanceof List && (name.equals("index") || name.equals("count"))) {
      return new Bound(obj, name);
    }
    return new Undefined(name);
  }

  static @Nullable Object getItem(@Nullable Object obj, @Nullable Object key) {
    requireDefined(obj);
    if (obj instanceof Map<?, ?> m) {
      if (m.containsKey(key)) {
        return m.get(key);
      }
      return key instanceof String s && !(obj instanceof Namespace) ? getAttr(obj, s)
          : new Undefined(String.valueOf(key));
    }
    if ((obj instanceof List || obj instanceof String) && isInteger(key)) {
      int n = obj instanceof List<?> l ? l.size() : ((String) obj).length();
      long i = asLong(key);
      if (i < 0) {
        i += n;
      }
      if (i < 0 || i >= n) {
        return new Undefined("[" + key + "]");
      }
      return obj instanceof List<?> l ? l.get((int) i)
          : String.valueOf(((String) obj).charAt((int) i));
    }
    return key instanceof String s ? getAttr(obj, s) : new Undefined(String.valueOf(key));
  }

  private static Object slice(@Nullable Object obj, @Nullable Object start,
      @Nullable Object stop, @Nullable Object step) {
    requireDefined(obj);
    int n;
    if (obj instanceof List<?> l) {
      n = l.size();
    } else if (obj instanceof String s) {
      n = s.length();
    } else {
      throw new TemplateException("'" + typeName(obj) + "' object is not subscriptable");
    }
    long st = step == null ? 1 : asLong(step);
    if (st == 0) {
      throw new TemplateException("slice step cannot be zero");
    }
    long lo;
    long hi;
    if (st > 0) {
      lo = start == null ? 0 : clampIndex(asLong(start), n, 0, n);
      hi = stop == null ? n : clampIndex(asLong(stop), n, 0, n);
    } else {
      lo = start == null ? n - 1 : clampIndex(asLong(start), n, -1, n - 1);
      hi = stop == null ? -1 : clampIndex(asLong(stop), n, -1, n - 1);
    }
    List<Object> items = new ArrayList<>();
    StringBuilder chars = new StringBuilder();
    for (long i = lo; st > 0 ? i < hi : i > hi; i += st) {
      if (obj instanceof List<?> l) {
        items.add(l.get((int) i));
      } else {
        chars.append(((String) obj).charAt((int) i));
      }
    }
    return obj instanceof List ? items : chars.toString();
  }

  private static long clampIndex(long i, int n, long min, long max) {
    if (i < 0) {
      i += n;
    }
    return Math.max(min, Math.min(max, i));
  }

  // ---- calls -------------------------------------------------------------------------------

  private static @Nullable Object call(@Nullable Object callee, List<Object> args,
      List<String> kwNames, List<Object> kwValues) {
    if (callee instanceof Bound b) {
      return Methods.call(b.self(), b.name(), args, kwArgs(kwNames, kwValues));
    }
    if (!(callee instanceof Function f)) {
      throw new TemplateException(callee instanceof Undefined u
          ? "'" + u.name() + "' is undefined" : "'" + typeName(callee) + "' is not callable");
    }
    Map<String, Object> kw = kwArgs(kwNames, kwValues);
    switch (f.name()) {
      case "raise_exception" -> throw new TemplateException(
          "the template raised: " + (args.isEmpty() ? "" : str(args.get(0))));
      case "namespace", "dict" -> {
        Map<String, Object> m = f.name().equals("namespace") ? new Namespace()
            : new LinkedHashMap<>();
        if (!args.isEmpty() && args.get(0) instanceof Map<?, ?> init) {
          init.forEach((k, v) -> m.put(String.valueOf(k), v));
        }
        m.putAll(kw);
        return m;
      }
      case "range" -> {
        long start = 0;
        long stop;
        long step = 1;
        if (args.size() == 1) {
          stop = asLong(args.get(0));
        } else if (args.size() >= 2) {
          start = asLong(args.get(0));
          stop = asLong(args.get(1));
          step = args.size() > 2 ? asLong(args.get(2)) : 1;
        } else {
          throw new TemplateException("range expected at least 1 argument");
        }
        if (step == 0) {
          throw new TemplateException("range() arg 3 must not be zero");
        }
        List<Object> r = new ArrayList<>();
        for (long i = start; step > 0 ? i < stop : i > stop; i += step) {
          if (r.size() >= 100_000) {
            throw new TemplateException("range too big");
          }
          r.add(i);
        }
        return r;
      }
      case "strftime_now" -> {
        return strftime(str(args.isEmpty() ? "" : args.get(0)), LocalDateTime.now());
      }
      default -> throw new TemplateException("'" + f.name() + "' is not callable");
    }
  }

  private static Map<String, Object> kwArgs(List<String> names, List<Object> values) {
    Map<String, Object> kw = new LinkedHashMap<>();
    for (int k = 0; k < names.size(); k++) {
      kw.put(names.get(k), values.get(k));
    }
    return kw;
  }

  /** Python's {@code strftime} for the directives chat templates use to date a system prompt. */
  static String strftime(String format, LocalDateTime t) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < format.length(); i++) {
      char c = format.charAt(i);
      if (c != '%' || i + 1 == format.length()) {
        b.append(c);
        continue;
      }
      char d = format.charAt(++i);
      switch (d) {
        case 'd' -> b.append(String.format("%02d", t.getDayOfMonth()));
        case 'm' -> b.append(String.format("%02d", t.getMonthValue()));
        case 'Y' -> b.append(t.getYear());
        case 'y' -> b.append(String.format("%02d", t.getYear() % 100));
        case 'H' -> b.append(String.format("%02d", t.getHour()));
        case 'I' -> b.append(String.format("%02d", (t.getHour() + 11) % 12 + 1));
        case 'M' -> b.append(String.format("%02d", t.getMinute()));
        case 'S' -> b.append(String.format("%02d", t.getSecond()));
        case 'p' -> b.append(t.getHour() < 12 ? "AM" : "PM");
        case 'j' -> b.append(String.format("%03d", t.getDayOfYear()));
        case 'b' -> b.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.US));
        case 'B' -> b.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.US));
        case 'a' -> b.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.US));
        case 'A' -> b.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.US));
        case '%' -> b.append('%');
        default -> throw new TemplateException("strftime_now: unsupported directive %" + d);
      }
    }
    return b.toString();
  }

  // ---- Python value semantics --------------------------------------------------------------

  static void requireDefined(@Nullable Object v) {
    if (v instanceof Undefined u) {
      throw new TemplateException("'" + u.name() + "' is undefined");
    }
  }

  static boolean truthy(@Nullable Object v) {
    if (v == null || v instanceof Undefined) {
      return false;
    }
    if (v instanceof Boolean b) {
      return b;
    }
    if (v instanceof Long l) {
      return l != 0;
    }
    if (v instanceof Double d) {
      return d != 0;
    }
    if (v instanceof String s) {
      return !s.isEmpty();
    }
    if (v instanceof Collection<?> c) {
      return !c.isEmpty();
    }
    if (v instanceof Map<?, ?> m) {
      return v instanceof Namespace || !m.isEmpty();
    }
    return true;
  }

  static boolean isNumber(@Nullable Object v) {
    return v instanceof Long || v instanceof Double || v instanceof Boolean
        || v instanceof Integer;
  }

  static boolean isInteger(@Nullable Object v) {
    return v instanceof Long || v instanceof Boolean || v instanceof Integer;
  }

  static long asLong(@Nullable Object v) {
    if (v instanceof Long l) {
      return l;
    }
    if (v instanceof Integer i) {
      return i;
    }
    if (v instanceof Boolean b) {
      return b ? 1 : 0;
    }
    throw new TemplateException("an integer is required, got " + typeName(v));
  }

  static double asDouble(@Nullable Object v) {
    return v instanceof Double d ? d : asLong(v);
  }

  static boolean pyEquals(@Nullable Object a, @Nullable Object b) {
    if (a instanceof Undefined || b instanceof Undefined) {
      return a instanceof Undefined && b instanceof Undefined;
    }
    if (isNumber(a) && isNumber(b)) {
      return asDouble(a) == asDouble(b);
    }
    if (a instanceof List<?> x && b instanceof List<?> y) {
      if (x.size() != y.size()) {
        return false;
      }
      for (int i = 0; i < x.size(); i++) {
        if (!pyEquals(x.get(i), y.get(i))) {
          return false;
        }
      }
      return true;
    }
    return Objects.equals(a, b);
  }

  static int compare(@Nullable Object a, @Nullable Object b) {
    requireDefined(a);
    requireDefined(b);
    if (isNumber(a) && isNumber(b)) {
      return Double.compare(asDouble(a), asDouble(b));
    }
    if (a instanceof String x && b instanceof String y) {
      return x.compareTo(y);
    }
    if (a instanceof List<?> x && b instanceof List<?> y) {
      for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
        if (!pyEquals(x.get(i), y.get(i))) {
          return compare(x.get(i), y.get(i));
        }
      }
      return Integer.compare(x.size(), y.size());
    }
    throw new TemplateException(
        "'<' not supported between " + typeName(a) + " and " + typeName(b));
  }

  static boolean contains(@Nullable Object container, @Nullable Object item) {
    if (container instanceof Undefined) {
      return false;
    }
    if (container instanceof String s) {
      requireDefined(item);
      if (!(item instanceof String sub)) {
        throw new TemplateException("'in <string>' requires string as left operand, not "
            + typeName(item));
      }
      return s.contains(sub);
    }
    if (container instanceof Map<?, ?> m) {
      return m.containsKey(item);
    }
    if (container instanceof List<?> l) {
      for (Object o : l) {
        if (pyEquals(o, item)) {
          return true;
        }
      }
      return false;
    }
    throw new TemplateException("argument of type '" + typeName(container) + "' is not iterable");
  }

  /** What a {@code for} loop walks: a list's items, a map's keys, a string's characters. */
  static List<Object> iterate(@Nullable Object v) {
    if (v instanceof Undefined) {
      return List.of();
    }
    if (v instanceof List<?> l) {
      return new ArrayList<>(l);
    }
    if (v instanceof Map<?, ?> m) {
      return new ArrayList<>(m.keySet());
    }
    if (v instanceof String s) {
      List<Object> chars = new ArrayList<>(s.length());
      s.codePoints().forEach(cp -> chars.add(new String(Character.toChars(cp))));
      return chars;
    }
    throw new TemplateException("'" + typeName(v) + "' object is not iterable");
  }

  static String typeName(@Nullable Object v) {
    if (v == null) {
      return "NoneType";
    }
    if (v instanceof Undefined) {
      return "Undefined";
    }
    if (v instanceof String) {
      return "str";
    }
    if (v instanceof Boolean) {
      return "bool";
    }
    if (v instanceof Long || v instanceof Integer) {
      return "int";
    }
    if (v instanceof Double) {
      return "float";
    }
    if (v instanceof List) {
      return "list";
    }
    if (v instanceof Namespace) {
      return "Namespace";
    }
    if (v instanceof Map) {
      return "dict";
    }
    return "function";
  }

  /** Python's {@code str()}, as Jinja2 prints a value. */
  static String str(@Nullable Object v) {
    if (v instanceof String s) {
      return s;
    }
    if (v instanceof Undefined) {
      return "";
    }
    return repr(v);
  }

  static String repr(@Nullable Object v) {
    if (v == null) {
      return "None";
    }
    if (v instanceof String s) {
      return PyStrings.repr(s);
    }
    if (v instanceof Boolean b) {
      return b ? "True" : "False";
    }
    if (v instanceof Double d) {
      return Json.floatRepr(d);
    }
    if (v instanceof Long || v instanceof Integer) {
      return v.toString();
    }
    if (v instanceof List<?> l) {
      boolean tuple = v instanceof Tuple;
      StringBuilder b = new StringBuilder(v instanceof DictView view
          ? "dict_" + view.kind + "([" : tuple ? "(" : "[");
      for (int i = 0; i < l.size(); i++) {
        b.append(i == 0 ? "" : ", ").append(repr(l.get(i)));
      }
      if (tuple && l.size() == 1) {
        b.append(',');
      }
      return b.append(v instanceof DictView ? "])" : tuple ? ")" : "]").toString();
    }
    if (v instanceof Namespace ns) {
      return "<Namespace " + repr(new TreeMap<>(ns)) + ">";
    }
    if (v instanceof Map<?, ?> m) {
      StringBuilder b = new StringBuilder("{");
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        b.append(first ? "" : ", ").append(repr(e.getKey())).append(": ").append(repr(e.getValue()));
        first = false;
      }
      return b.append('}').toString();
    }
    if (v instanceof Undefined) {
      return "";
    }
    return "<function>";
  }
}
