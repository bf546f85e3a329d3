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
import io.affinityrouter.core.tokenizer.TemplateLexer.Data;
import io.affinityrouter.core.tokenizer.TemplateLexer.Kind;
import io.affinityrouter.core.tokenizer.TemplateLexer.Piece;
import io.affinityrouter.core.tokenizer.TemplateLexer.Tag;
import io.affinityrouter.core.tokenizer.TemplateLexer.Tok;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Builds the syntax tree from the lexer's pieces, with Jinja2's operator precedence. */
final class TemplateParser {
  private final List<Piece> pieces;
  private int at;
  // The tag being parsed, and the position in its tokens.
  private List<Tok> toks = List.of();
  private int t;
  private int tagOffset;

  TemplateParser(List<Piece> pieces) {
    this.pieces = pieces;
  }

  List<Node> parseTemplate() {
    List<Node> body = parseBody(Set.of());
    if (at < pieces.size()) {
      throw error("unexpected '" + tagName((Tag) pieces.get(at)) + "'");
    }
    return body;
  }

  /** Parses nodes until a block tag named in {@code ends} (left unconsumed) or the end. */
  private List<Node> parseBody(Set<String> ends) {
    List<Node> nodes = new ArrayList<>();
    while (at < pieces.size()) {
      Piece p = pieces.get(at);
      if (p instanceof Data d) {
        nodes.add(new Text(d.text()));
        at++;
        continue;
      }
      Tag tag = (Tag) p;
      begin(tag);
      if (!tag.block()) {
        at++;
        Expr e = parseExpression();
        expectEnd();
        nodes.add(new ChatTemplate.Output(e));
        continue;
      }
      String name = tagName(tag);
      if (ends.contains(name)) {
        return nodes;
      }
      at++;
      t = 1;
      switch (name) {
        case "if" -> nodes.add(parseIf());
        case "for" -> nodes.add(parseFor());
        case "set" -> nodes.add(parseSet());
        case "break", "continue" -> {
          expectEnd();
          nodes.add(new LoopControl(name.equals("break")));
        }
        case "generation" -> {
          expectEnd();
          nodes.addAll(parseBody(Set.of("endgeneration")));
          closeTag("endgeneration");
        }
        default -> throw error("unsupported tag '" + name + "'");
      }
    }
    if (!ends.isEmpty()) {
      throw new TemplateException("template ends before " + String.join(" or ", ends));
    }
    return nodes;
  }

  private Node parseIf() {
    List<Expr> conditions = new ArrayList<>();
    List<List<Node>> branches = new ArrayList<>();
    conditions.add(parseExpression());
    expectEnd();
    List<Node> otherwise = List.of();
    Set<String> ends = Set.of("elif", "else", "endif");
    while (true) {
      branches.add(parseBody(ends));
      String name = currentTagName();
      at++;
      t = 1;
      if (name.equals("elif")) {
        conditions.add(parseExpression());
        expectEnd();
      } else if (name.equals("else")) {
        expectEnd();
        otherwise = parseBody(Set.of("endif"));
        closeTag("endif");
        break;
      } else {
        expectEnd();
        break;
      }
    }
    return new If(conditions, branches, otherwise);
  }

  private Node parseFor() {
    List<String> targets = new ArrayList<>();
    do {
      targets.add(expectName());
    } while (accept(","));
    if (!accept("in")) {
      throw error("expected 'in'");
    }
    Expr iterable = parseCondition(false);
    Expr filter = null;
    if (accept("if")) {
      filter = parseCondition(true);
    }
    if (peek() != null && peek().is("recursive")) {
      throw error("unsupported 'recursive' loop");
    }
    expectEnd();
    List<Node> body = parseBody(Set.of("else", "endfor"));
    List<Node> otherwise = List.of();
    if (currentTagName().equals("else")) {
      at++;
      t = 1;
      expectEnd();
      otherwise = parseBody(Set.of("endfor"));
    }
    closeTag("endfor");
    return new For(targets, iterable, filter, body, otherwise);
  }

  private Node parseSet() {
    String name = expectName();
    if (t == toks.size()) {
      List<Node> body = parseBody(Set.of("endset"));
      closeTag("endset");
      return new SetBlock(name, body);
    }
    Expr target = new Name(name);
    if (peek() != null && peek().is(",")) {
      List<Expr> names = new ArrayList<>(List.of(target));
      while (accept(",")) {
        names.add(new Name(expectName()));
      }
      target = new ListExpr(names, true);
    } else if (accept(".")) {
      target = new GetAttr(target, expectName());
    }
    if (!accept("=")) {
      throw error("expected '='");
    }
    Expr value = parseTuple();
    expectEnd();
    return new SetVar(target, value);
  }

  private void closeTag(String name) {
    if (at >= pieces.size() || !currentTagName().equals(name)) {
      throw new TemplateException("expected '" + name + "'");
    }
    at++;
    t = 1;
    expectEnd();
  }

  private String currentTagName() {
    Tag tag = (Tag) pieces.get(at);
    begin(tag);
    return tagName(tag);
  }

  private void begin(Tag tag) {
    toks = tag.toks();
    t = 0;
    tagOffset = tag.offset();
  }

  private String tagName(Tag tag) {
    if (!tag.block()) {
      return "{{";
    }
    if (tag.toks().isEmpty() || tag.toks().get(0).kind() != Kind.NAME) {
      throw new TemplateException("tag at offset " + tag.offset() + ": expected a tag name");
    }
    return tag.toks().get(0).text();
  }

  // ---- expressions -------------------------------------------------------------------------

  /** An expression, or a tuple of them without parentheses (as {@code set} takes). */
  private Expr parseTuple() {
    Expr first = parseExpression();
    if (peek() == null || !peek().is(",")) {
      return first;
    }
    List<Expr> items = new ArrayList<>(List.of(first));
    while (accept(",")) {
      if (peek() == null) {
        break;
      }
      items.add(parseExpression());
    }
    return new ListExpr(items, true);
  }

  Expr parseExpression() {
    return parseCondition(true);
  }

  private Expr parseCondition(boolean withCondExpr) {
    Expr e = parseOr();
    while (withCondExpr && peek() != null && peek().is("if")) {
      t++;
      Expr cond = parseOr();
      Expr otherwise = accept("else") ? parseCondition(true) : null;
      e = new Cond(cond, e, otherwise);
    }
    return e;
  }

  private Expr parseOr() {
    Expr e = parseAnd();
    while (accept("or")) {
      e = new Binary("or", e, parseAnd());
    }
    return e;
  }

  private Expr parseAnd() {
    Expr e = parseNot();
    while (accept("and")) {
      e = new Binary("and", e, parseNot());
    }
    return e;
  }

  private Expr parseNot() {
    if (accept("not")) {
      return new Unary("not", parseNot());
    }
    return parseCompare();
  }

  private Expr parseCompare() {
    Expr e = parseMath1();
    while (true) {
      Tok p = peek();
      if (p == null) {
        return e;
      }
      if (p.kind() == Kind.OP && Set.of("==", "!=", "<", ">", "<=", ">=").contains(p.text())) {
        t++;
        e = new Binary(p.text(), e, parseMath1());
      } else if (p.is("in")) {
        t++;
        e = new Binary("in", e, parseMath1());
      } else if (p.is("not") && t + 1 < toks.size() && toks.get(t + 1).is("in")) {
        t += 2;
        e = new Binary("not in", e, parseMath1());
      } else {
        return e;
      }
    }
  }

  private Expr parseMath1() {
    Expr e = parseConcat();
    while (peek() != null && (peek().is("+") || peek().is("-"))) {
      String op = toks.get(t++).text();
      e = new Binary(op, e, parseConcat());
    }
    return e;
  }

  private Expr parseConcat() {
    Expr e = parseMath2();
    while (accept("~")) {
      e = new Binary("~", e, parseMath2());
    }
    return e;
  }

  private Expr parseMath2() {
    Expr e = parsePow();
    while (peek() != null
        && (peek().is("*") || peek().is("/") || peek().is("//") || peek().is("%"))) {
      String op = toks.get(t++).text();
      e = new Binary(op, e, parsePow());
    }
    return e;
  }

  private Expr parsePow() {
    Expr e = parseUnary(true);
    while (accept("**")) {
      e = new Binary("**", e, parseUnary(true));
    }
    return e;
  }

  private Expr parseUnary(boolean withFilter) {
    Expr e;
    if (accept("-")) {
      e = new Unary("-", parseUnary(false));
    } else if (accept("+")) {
      e = new Unary("+", parseUnary(false));
    } else {
      e = parsePostfix(parsePrimary());
    }
    return withFilter ? parseFilterExpr(e) : e;
  }

  private Expr parsePrimary() {
    Tok tok = next("an expression");
    switch (tok.kind()) {
      case STRING -> {
        StringBuilder b = new StringBuilder((String) tok.value());
        while (peek() != null && peek().kind() == Kind.STRING) {
          b.append((String) toks.get(t++).value());
        }
        return new Literal(b.toString());
      }
      case INT, FLOAT -> {
        return new Literal(tok.value());
      }
      case NAME -> {
        return switch (tok.text()) {
          case "true", "True" -> new Literal(Boolean.TRUE);
          case "false", "False" -> new Literal(Boolean.FALSE);
          case "none", "None" -> new Literal(null);
          default -> new Name(tok.text());
        };
      }
      default -> {
        if (tok.is("(")) {
          if (accept(")")) {
            return new ListExpr(List.of(), true);
          }
          Expr e = parseExpression();
          if (peek() != null && peek().is(",")) {
            List<Expr> items = new ArrayList<>(List.of(e));
            while (accept(",") && !(peek() != null && peek().is(")"))) {
              items.add(parseExpression());
            }
            e = new ListExpr(items, true);
          }
          expect(")");
          return e;
        }
        if (tok.is("[")) {
          List<Expr> items = new ArrayList<>();
          while (!accept("]")) {
            if (!items.isEmpty()) {
              expect(",");
              if (accept("]")) {
                break;
              }
            }
            items.add(parseExpression());
          }
          return new ListExpr(items, false);
        }
        if (tok.is("{")) {
          List<Expr> keys = new ArrayList<>();
          List<Expr> values = new ArrayList<>();
          while (!accept("}")) {
            if (!keys.isEmpty()) {
              expect(",");
              if (accept("}")) {
                break;
              }
            }
            keys.add(parseExpression());
            expect(":");
            values.add(parseExpression());
          }
          return new DictExpr(keys, values);
        }
        throw error("unexpected '" + tok.text() + "'");
      }
    }
  }

  private Expr parsePostfix(Expr e) {
    while (true) {
      if (accept(".")) {
        Tok name = next("an attribute name");
        if (name.kind() == Kind.INT) {
          e = new GetItem(e, new Literal(name.value()));
        } else if (name.kind() == Kind.NAME) {
          e = new GetAttr(e, name.text());
        } else {
          throw error("expected an attribute name");
        }
      } else if (accept("[")) {
        e = parseSubscript(e);
      } else if (peek() != null && peek().is("(")) {
        t++;
        e = parseCall(e);
      } else {
        return e;
      }
    }
  }

  private Expr parseSubscript(Expr target) {
    Expr start = null;
    if (!(peek() != null && peek().is(":"))) {
      start = parseExpression();
      if (accept("]")) {
        return new GetItem(target, start);
      }
    }
    expect(":");
    Expr stop = null;
    Expr step = null;
    if (!(peek() != null && (peek().is("]") || peek().is(":")))) {
      stop = parseExpression();
    }
    if (accept(":") && !(peek() != null && peek().is("]"))) {
      step = parseExpression();
    }
    expect("]");
    return new Slice(target, start, stop, step);
  }

  private Call parseCall(Expr callee) {
    List<Expr> args = new ArrayList<>();
    List<String> kwNames = new ArrayList<>();
    List<Expr> kwValues = new ArrayList<>();
    parseArgs(args, kwNames, kwValues);
    return new Call(callee, args, kwNames, kwValues);
  }

  /** Parses call arguments after the opening parenthesis, through the closing one. */
  private void parseArgs(List<Expr> args, List<String> kwNames, List<Expr> kwValues) {
    boolean first = true;
    while (!accept(")")) {
      if (!first) {
        expect(",");
        if (accept(")")) {
          return;
        }
      }
      first = false;
      Tok p = peek();
      if (p != null && p.kind() == Kind.NAME && t + 1 < toks.size() && toks.get(t + 1).is("=")) {
        t += 2;
        kwNames.add(p.text());
        kwValues.add(parseExpression());
      } else {
        if (!kwNames.isEmpty()) {
          throw error("a positional argument after a keyword argument");
        }
        args.add(parseExpression());
      }
    }
  }

  private Expr parseFilterExpr(Expr e) {
    while (true) {
      if (accept("|")) {
        String name = expectDottedName();
        List<Expr> args = new ArrayList<>();
        List<String> kwNames = new ArrayList<>();
        List<Expr> kwValues = new ArrayList<>();
        if (accept("(")) {
          parseArgs(args, kwNames, kwValues);
        }
        e = new Filter(e, name, args, kwNames, kwValues);
      } else if (accept("is")) {
        boolean negated = accept("not");
        String name = expectDottedName();
        List<Expr> args = new ArrayList<>();
        if (accept("(")) {
          List<String> kwNames = new ArrayList<>();
          parseArgs(args, kwNames, new ArrayList<>());
          if (!kwNames.isEmpty()) {
            throw error("keyword arguments to a test");
          }
        } else if (peek() != null && startsBareTestArgument(peek())) {
          args.add(parsePostfix(parsePrimary()));
        }
        e = new Test(e, name, args, negated);
      } else {
        return e;
      }
    }
  }

  private static final Set<String> NOT_AN_ARGUMENT =
      Set.of("else", "or", "and", "is", "in", "if", "not");

  private static boolean startsBareTestArgument(Tok tok) {
    return switch (tok.kind()) {
      case STRING, INT, FLOAT -> true;
      case NAME -> !NOT_AN_ARGUMENT.contains(tok.text());
      case OP -> tok.is("[") || tok.is("{") || tok.is("-");
    };
  }

  private String expectDottedName() {
    StringBuilder b = new StringBuilder(expectName());
    while (peek() != null && peek().is(".")) {
      t++;
      b.append('.').append(expectName());
    }
    return b.toString();
  }

  // ---- token helpers -----------------------------------------------------------------------

  private @Nullable Tok peek() {
    return t < toks.size() ? toks.get(t) : null;
  }

  private Tok next(String what) {
    if (t >= toks.size()) {
      throw error("expected " + what);
    }
    return toks.get(t++);
  }

  private boolean accept(String s) {
    if (t < toks.size() && toks.get(t).is(s)) {
      t++;
      return true;
    }
    return false;
  }

  private void expect(String s) {
    if (!accept(s)) {
      throw error("expected '" + s + "'");
    }
  }

  private String expectName() {
    Tok tok = next("a name");
    if (tok.kind() != Kind.NAME) {
      throw error("expected a name, got '" + tok.text() + "'");
    }
    return tok.text();
  }

  private void expectEnd() {
    if (t < toks.size()) {
      throw error("unexpected '" + toks.get(t).text() + "'");
    }
  }

  private TemplateException error(String message) {
    return new TemplateException("tag at offset " + tagOffset + ": " + message);
  }
}
