package io.affinityrouter.core.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A HuggingFace chat template, parsed once and rendered per request as {@code transformers}
 * renders it: Jinja2 with {@code trim_blocks}, {@code lstrip_blocks}, loop controls, the
 * {@code generation} tag, and the globals {@code raise_exception}, {@code strftime_now},
 * {@code namespace} and {@code range}. Values follow Python: {@code None} renders as
 * {@code "None"}, a missing key is undefined (falsy, renders as nothing, fails in arithmetic),
 * strings have Python's methods. Thread-safe once built.
 *
 * <p>The subset is what chat templates use; anything else (macros, includes, raw blocks) fails at
 * parse time with a {@link TemplateException} naming the construct, never renders differently.
 */
final class ChatTemplate {
  private final List<Node> body;

  private ChatTemplate(List<Node> body) {
    this.body = body;
  }

  /** Parses {@code source}; throws {@link TemplateException} for what it cannot render. */
  static ChatTemplate parse(String source) {
    return new ChatTemplate(new TemplateParser(TemplateLexer.tokenize(source)).parseTemplate());
  }

  /** Renders with {@code context} as the template's variables (JSON-like Java values). */
  String render(Map<String, ?> context) {
    StringBuilder out = new StringBuilder();
    Interpreter.render(body, context, out);
    return out.toString();
  }

  /** A template that cannot be parsed or that failed while rendering (including raise_exception). */
  static final class TemplateException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TemplateException(String message) {
      super(message);
    }
  }

  // ---- syntax tree -------------------------------------------------------------------------

  sealed interface Node permits Text, Output, If, For, SetVar, SetBlock, LoopControl {}

  record Text(String text) implements Node {}

  record Output(Expr expr) implements Node {}

  record If(List<Expr> conditions, List<List<Node>> branches, List<Node> otherwise)
      implements Node {}

  record For(List<String> targets, Expr iterable, @Nullable Expr filter, List<Node> body,
      List<Node> otherwise) implements Node {}

  record SetVar(Expr target, Expr value) implements Node {}

  record SetBlock(String name, List<Node> body) implements Node {}

  record LoopControl(boolean isBreak) implements Node {}

  sealed interface Expr
      permits Literal, Name, GetAttr, GetItem, Slice, Call, Filter, Test, Unary, Binary, Cond,
          ListExpr, DictExpr {}

  record Literal(@Nullable Object value) implements Expr {}

  record Name(String name) implements Expr {}

  record GetAttr(Expr target, String name) implements Expr {}

  record GetItem(Expr target, Expr key) implements Expr {}

  record Slice(Expr target, @Nullable Expr start, @Nullable Expr stop, @Nullable Expr step)
      implements Expr {}

  record Call(Expr callee, List<Expr> args, List<String> kwNames, List<Expr> kwValues)
      implements Expr {}

  record Filter(Expr value, String name, List<Expr> args, List<String> kwNames,
      List<Expr> kwValues) implements Expr {}

  record Test(Expr value, String name, List<Expr> args, boolean negated) implements Expr {}

  record Unary(String op, Expr operand) implements Expr {}

  record Binary(String op, Expr left, Expr right) implements Expr {}

  record Cond(Expr condition, Expr then, @Nullable Expr otherwise) implements Expr {}

  record ListExpr(List<Expr> items, boolean tuple) implements Expr {}

  record DictExpr(List<Expr> keys, List<Expr> values) implements Expr {}

  static List<Expr> noExprs() {
    return new ArrayList<>(0);
  }
}
