package io.affinityrouter.core.tokenizer;

import io.affinityrouter.core.tokenizer.ChatTemplate.TemplateException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Splits a chat template into text and tags, applying Jinja2's whitespace control as
 * {@code transformers} configures it: {@code trim_blocks} and {@code lstrip_blocks} on, {@code -}
 * and {@code +} on either side of a tag, comments dropped.
 */
final class TemplateLexer {
  enum Kind { NAME, STRING, INT, FLOAT, OP }

  record Tok(Kind kind, String text, @Nullable Object value) {
    boolean is(String s) {
      return (kind == Kind.OP || kind == Kind.NAME) && text.equals(s);
    }
  }

  sealed interface Piece permits Data, Tag {}

  record Data(String text) implements Piece {}

  /** A {@code {% %}} tag ({@code block}) or a {@code {{ }}} one, with its expression tokens. */
  record Tag(boolean block, List<Tok> toks, int offset) implements Piece {}

  private final String src;
  private int pos;
  private final List<Piece> out = new ArrayList<>();

  private TemplateLexer(String src) {
    // Jinja2 reads \r\n and \r as \n, and drops one trailing newline (keep_trailing_newline off).
    String normalized = src.replace("\r\n", "\n").replace('\r', '\n');
    this.src = normalized.endsWith("\n")
        ? normalized.substring(0, normalized.length() - 1) : normalized;
  }

  static List<Piece> tokenize(String source) {
    TemplateLexer lexer = new TemplateLexer(source);
    lexer.run();
    return lexer.out;
  }

  private void run() {
    boolean stripNextLeading = false;
    while (pos <= src.length()) {
      int start = nextTagStart(pos);
      int dataStart = pos;
      String text = src.substring(pos, start < 0 ? src.length() : start);
      if (stripNextLeading) {
        text = lstrip(text);
        stripNextLeading = false;
      }
      if (start < 0) {
        addData(text);
        return;
      }
      char kind = src.charAt(start + 1);
      char sign = start + 2 < src.length() ? src.charAt(start + 2) : 0;
      if (sign == '-') {
        text = rstrip(text);
      } else if (sign != '+' && kind != '{') {
        int lineStart = text.lastIndexOf('\n') + 1;
        boolean lineStarting = dataStart == 0 || src.charAt(dataStart - 1) == '\n';
        if ((lineStart > 0 || lineStarting) && isBlankTail(text, lineStart)) {
          text = text.substring(0, lineStart);
        }
      }
      addData(text);
      pos = start + 2 + (sign == '-' || sign == '+' ? 1 : 0);
      boolean trimAfter;
      if (kind == '#') {
        int end = src.indexOf("#}", pos);
        if (end < 0) {
          throw new TemplateException("comment at offset " + start + ": not closed");
        }
        boolean minus = end > pos && src.charAt(end - 1) == '-';
        boolean plus = end > pos && src.charAt(end - 1) == '+';
        pos = end + 2;
        stripNextLeading = minus;
        trimAfter = !minus && !plus;
      } else {
        String closer = kind == '{' ? "}}" : "%}";
        List<Tok> toks = new ArrayList<>();
        int closeSign = scanExpression(closer, toks, start);
        out.add(new Tag(kind == '%', toks, start));
        stripNextLeading = closeSign == '-';
        trimAfter = kind == '%' && closeSign != '+' && closeSign != '-';
      }
      if (trimAfter && pos < src.length() && src.charAt(pos) == '\n') {
        pos++;
      }
    }
  }

  private void addData(String text) {
    if (!text.isEmpty()) {
      out.add(new Data(text));
    }
  }

  private int nextTagStart(int from) {
    for (int i = src.indexOf('{', from); i >= 0 && i + 1 < src.length();
        i = src.indexOf('{', i + 1)) {
      char c = src.charAt(i + 1);
      if (c == '{' || c == '%' || c == '#') {
        return i;
      }
    }
    return -1;
  }

  /** Reads expression tokens up to {@code closer}; returns the sign before it ('-', '+' or 0). */
  private int scanExpression(String closer, List<Tok> toks, int tagStart) {
    int depth = 0;
    while (true) {
      while (pos < src.length() && Character.isWhitespace(src.charAt(pos))) {
        pos++;
      }
      if (pos >= src.length()) {
        throw new TemplateException("tag at offset " + tagStart + ": not closed");
      }
      if (depth == 0 && src.startsWith(closer, pos)) {
        pos += closer.length();
        return 0;
      }
      if (depth == 0 && (src.charAt(pos) == '-' || src.charAt(pos) == '+')
          && src.startsWith(closer, pos + 1)) {
        int sign = src.charAt(pos);
        pos += 1 + closer.length();
        return sign;
      }
      char c = src.charAt(pos);
      if (c == '\'' || c == '"') {
        toks.add(readString(c));
      } else if (Character.isDigit(c)) {
        toks.add(readNumber());
      } else if (Character.isLetter(c) || c == '_') {
        int s = pos;
        while (pos < src.length()
            && (Character.isLetterOrDigit(src.charAt(pos)) || src.charAt(pos) == '_')) {
          pos++;
        }
        toks.add(new Tok(Kind.NAME, src.substring(s, pos), null));
      } else {
        Tok op = readOperator(tagStart);
        if (op.is("(") || op.is("[") || op.is("{")) {
          depth++;
        } else if ((op.is(")") || op.is("]") || op.is("}")) && depth > 0) {
          depth--;
        }
        toks.add(op);
      }
    }
  }

  private static final String[] OPERATORS = {
    "//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">", "=", "(", ")",
    "[", "]", "{", "}", ",", ".", ":", "|"
  };

  private Tok readOperator(int tagStart) {
    for (String op : OPERATORS) {
      if (src.startsWith(op, pos)) {
        pos += op.length();
        return new Tok(Kind.OP, op, null);
      }
    }
    throw new TemplateException(
        "tag at offset " + tagStart + ": unexpected character '" + src.charAt(pos) + "'");
  }

  private Tok readNumber() {
    int s = pos;
    while (pos < src.length() && (Character.isDigit(src.charAt(pos)) || src.charAt(pos) == '_')) {
      pos++;
    }
    boolean isFloat = false;
    if (pos + 1 < src.length() && src.charAt(pos) == '.' && Character.isDigit(src.charAt(pos + 1))) {
      isFloat = true;
      pos++;
      while (pos < src.length() && Character.isDigit(src.charAt(pos))) {
        pos++;
      }
    }
    if (pos < src.length() && (src.charAt(pos) == 'e' || src.charAt(pos) == 'E')) {
      int e = pos + 1;
      if (e < src.length() && (src.charAt(e) == '+' || src.charAt(e) == '-')) {
        e++;
      }
      if (e < src.length() && Character.isDigit(src.charAt(e))) {
        isFloat = true;
        pos = e;
        while (pos < src.length() && Character.isDigit(src.charAt(pos))) {
          pos++;
        }
      }
    }
    String text = src.substring(s, pos).replace("_", "");
    return isFloat
        ? new Tok(Kind.FLOAT, text, Double.parseDouble(text))
        : new Tok(Kind.INT, text, Long.parseLong(text));
  }

  /** A string literal with Python's escapes, as Jinja2 decodes it. */
  private Tok readString(char quote) {
    int s = pos++;
    StringBuilder b = new StringBuilder();
    while (true) {
      if (pos >= src.length()) {
        throw new TemplateException("string at offset " + s + ": not closed");
      }
      char c = src.charAt(pos++);
      if (c == quote) {
        return new Tok(Kind.STRING, src.substring(s, pos), b.toString());
      }
      if (c != '\\' || pos >= src.length()) {
        b.append(c);
        continue;
      }
      char e = src.charAt(pos++);
      switch (e) {
        case 'n' -> b.append('\n');
        case 't' -> b.append('\t');
        case 'r' -> b.append('\r');
        case '\\' -> b.append('\\');
        case '\'' -> b.append('\'');
        case '"' -> b.append('"');
        case 'a' -> b.append('\u0007');
        case 'b' -> b.append('\b');
        case 'f' -> b.append('\f');
        case 'v' -> b.append('\u000b');
        case '\n' -> { }
        case 'x' -> b.appendCodePoint(hex(2));
        case 'u' -> b.appendCodePoint(hex(4));
        case 'U' -> b.appendCodePoint(hex(8));
        default -> {
          if (e >= '0' && e <= '7') {
            int v = e - '0';
            for (int k = 0; k < 2 && pos < src.length() && src.charAt(pos) >= '0'
                && src.charAt(pos) <= '7'; k++) {
              v = v * 8 + (src.charAt(pos++) - '0');
            }
            b.append((char) v);
          } else {
            b.append('\\').append(e);
          }
        }
      }
    }
  }

  private int hex(int digits) {
    if (pos + digits > src.length()) {
      throw new TemplateException("string escape at offset " + pos + ": truncated");
    }
    try {
      int v = Integer.parseInt(src.substring(pos, pos + digits), 16);
      pos += digits;
      return v;
    } catch (NumberFormatException e) {
      throw new TemplateException("string escape at offset " + pos + ": not hexadecimal");
    }
  }

  private static boolean isBlankTail(String text, int from) {
    for (int i = from; i < text.length(); i++) {
      if (!Character.isWhitespace(text.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static String rstrip(String s) {
    int end = s.length();
    while (end > 0 && PyStrings.isSpace(s.charAt(end - 1))) {
      end--;
    }
    return s.substring(0, end);
  }

  private static String lstrip(String s) {
    int start = 0;
    while (start < s.length() && PyStrings.isSpace(s.charAt(start))) {
      start++;
    }
    return s.substring(start);
  }
}
