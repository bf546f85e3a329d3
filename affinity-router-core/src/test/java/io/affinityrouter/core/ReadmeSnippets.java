package io.affinityrouter.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;

/** Code shown in the README, compared with the test that compiles and runs it. */
public final class ReadmeSnippets {
  private ReadmeSnippets() {}

  /**
   * The lines between the markers {@code start} and {@code end} of a test method body in
   * {@code source} (indented four spaces there), unindented as the README shows them.
   */
  public static String inTest(Path source, String start, String end) throws IOException {
    String text = Files.readString(source);
    int from = text.indexOf("\n    " + start);
    if (from < 0) {
      throw new AssertionError("no marker " + start + " in " + source);
    }
    from += 5 + start.length();
    String body = text.substring(from, text.indexOf("\n    " + end, from));
    return body.lines().skip(1)
        .map(l -> l.length() >= 4 ? l.substring(4) : l.strip())
        .collect(Collectors.joining("\n")).stripTrailing();
  }

  /** The first {@code java} code block after the line {@code heading} of the top-level README. */
  public static String inReadme(String heading) throws IOException {
    String readme = Files.readString(Path.of("../README.md"));
    int at = readme.indexOf("\n" + heading + "\n");
    if (at < 0) {
      throw new AssertionError("no heading " + heading + " in the README");
    }
    int code = readme.indexOf("```java\n", at) + "```java\n".length();
    return readme.substring(code, readme.indexOf("\n```", code));
  }
}
