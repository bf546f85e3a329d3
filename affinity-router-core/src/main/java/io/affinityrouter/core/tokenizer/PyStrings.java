package io.affinityrouter.core.tokenizer;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Python's {@code str} methods, as chat templates call them, with Python's whitespace. */
final class PyStrings {
  private PyStrings() {}

  /** Python's {@code str.isspace} for one character. */
  static boolean isSpace(char c) {
    return (c >= '\t' && c <= '\r') || (c >= '\u001c' && c <= '\u001f') || c == ' '
        || c == '\u0085' || (c > 0x7f && Character.isSpaceChar(c));
  }

  static String strip(String s, @Nullable String chars, boolean left, boolean right) {
    int start = 0;
    int end = s.length();
    if (left) {
      while (start < end && stripped(s.charAt(start), chars)) {
        start++;
      }
    }
    if (right) {
      while (end > start && stripped(s.charAt(end - 1), chars)) {
        end--;
      }
    }
    return s.substring(start, end);
  }

  private static boolean stripped(char c, @Nullable String chars) {
    return chars == null ? isSpace(c) : chars.indexOf(c) >= 0;
  }

  /** {@code str.split(sep, maxsplit)}; a null separator splits on runs of whitespace. */
  static List<Object> split(String s, @Nullable String sep, long maxSplit) {
    List<Object> parts = new ArrayList<>();
    if (sep == null) {
      int i = 0;
      int n = s.length();
      while (true) {
        while (i < n && isSpace(s.charAt(i))) {
          i++;
        }
        if (i >= n) {
          return parts;
        }
        if (maxSplit >= 0 && parts.size() == maxSplit) {
          parts.add(strip(s.substring(i), null, false, true));
          return parts;
        }
        int j = i;
        while (j < n && !isSpace(s.charAt(j))) {
          j++;
        }
        parts.add(s.substring(i, j));
        i = j;
      }
    }
    if (sep.isEmpty()) {
      throw new ChatTemplate.TemplateException("split: empty separator");
    }
    int from = 0;
    while (maxSplit < 0 || parts.size() < maxSplit) {
      int k = s.indexOf(sep, from);
      if (k < 0) {
        break;
      }
      parts.add(s.substring(from, k));
      from = k + sep.length();
    }
    parts.add(s.substring(from));
    return parts;
  }

  /** {@code str.rsplit(sep, maxsplit)} for a given separator. */
  static List<Object> rsplit(String s, @Nullable String sep, long maxSplit) {
    if (sep == null || maxSplit < 0) {
      return split(s, sep, maxSplit);
    }
    List<Object> parts = new ArrayList<>();
    int to = s.length();
    while (parts.size() < maxSplit) {
      int k = s.lastIndexOf(sep, to - sep.length());
      if (k < 0 || to - sep.length() < 0) {
        break;
      }
      parts.add(0, s.substring(k + sep.length(), to));
      to = k;
    }
    parts.add(0, s.substring(0, to));
    return parts;
  }

  static String replace(String s, String old, String replacement, long count) {
    if (count < 0) {
      if (old.isEmpty()) {
        StringBuilder b = new StringBuilder(replacement);
        s.codePoints().forEach(cp -> b.appendCodePoint(cp).append(replacement));
        return b.toString();
      }
      return s.replace(old, replacement);
    }
    StringBuilder b = new StringBuilder();
    int from = 0;
    for (long n = 0; n < count; n++) {
      int k = s.indexOf(old, from);
      if (k < 0) {
        break;
      }
      b.append(s, from, k).append(replacement);
      from = k + old.length();
      if (old.isEmpty()) {
        if (from >= s.length()) {
          break;
        }
        b.append(s.charAt(from++));
      }
    }
    return b.append(s.substring(Math.min(from, s.length()))).toString();
  }

  /** {@code str.title()}: a letter after a non-letter is upper case, other letters lower. */
  static String title(String s) {
    StringBuilder b = new StringBuilder(s.length());
    boolean previousCased = false;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      b.append(previousCased ? Character.toLowerCase(c) : Character.toUpperCase(c));
      previousCased = Character.isLetter(c);
    }
    return b.toString();
  }

  static String capitalize(String s) {
    return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1).toLowerCase();
  }

  /** Python's {@code repr} of a string: single quotes unless it holds one and no double quote. */
  static String repr(String s) {
    char q = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
    StringBuilder b = new StringBuilder(s.length() + 2).append(q);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c == q) {
            b.append('\\').append(c);
          } else if (c < 0x20 || c == 0x7f) {
            b.append(String.format("\\x%02x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append(q).toString();
  }
}
