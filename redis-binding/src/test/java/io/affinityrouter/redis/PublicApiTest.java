package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Router;
import io.affinityrouter.Unstable;
import io.affinityrouter.core.AffinityRouter;
import java.io.IOException;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/api.md lists every public type of the three published artifacts, as built, and which
 * packages are {@link Unstable}. Here because this module's tests see all three.
 */
class PublicApiTest {
  private static final Path API_DOC = Path.of("..", "docs", "api.md");
  private static final String INTERNAL = "io.affinityrouter.internal";
  private static final Pattern HEADING = Pattern.compile("^## `([\\w.]+)`(.*)$");
  private static final Pattern ENTRY = Pattern.compile("^- ((?:`[\\w.]+`(?:, )?)+)");
  private static final Pattern NAME = Pattern.compile("`([\\w.]+)`");

  @Test
  void theApiPageListsExactlyThePublicTypesOfTheArtifacts() throws Exception {
    Map<String, TreeSet<String>> built = new TreeMap<>();
    for (Class<?> anchor : List.of(Router.class, AffinityRouter.class, RedisBindingStore.class)) {
      for (String name : classNames(anchor)) {
        Class<?> c = Class.forName(name, false, anchor.getClassLoader());
        if (isPublicApi(c) && !c.getPackageName().startsWith(INTERNAL)) {
          String simple = c.getName().substring(c.getPackageName().length() + 1).replace('$', '.');
          built.computeIfAbsent(c.getPackageName(), k -> new TreeSet<>()).add(simple);
        }
      }
    }
    assertThat(built).containsKeys("io.affinityrouter", "io.affinityrouter.spi",
        "io.affinityrouter.core", "io.affinityrouter.redis");
    assertThat(documented().types).isEqualTo(built);
  }

  @Test
  void theApiPageMarksExactlyTheUnstablePackages() throws Exception {
    Documented doc = documented();
    for (String pkg : doc.types.keySet()) {
      Class<?> info = Class.forName(pkg + ".package-info", false, Router.class.getClassLoader());
      assertThat(doc.unstable.contains(pkg)).as(pkg)
          .isEqualTo(info.isAnnotationPresent(Unstable.class));
    }
    assertThat(doc.unstable).contains("io.affinityrouter.core.engine",
        "io.affinityrouter.core.kvevents", "io.affinityrouter.core.metrics");
  }

  @Test
  void internalHelpersAreNotPartOfTheListedApi() throws Exception {
    assertThat(documented().types).doesNotContainKey(INTERNAL);
    assertThat(Class.forName(INTERNAL + ".Checks").getPackageName()).isEqualTo(INTERNAL);
  }

  private record Documented(Map<String, TreeSet<String>> types, TreeSet<String> unstable) {}

  private static Documented documented() throws IOException {
    Map<String, TreeSet<String>> types = new TreeMap<>();
    TreeSet<String> unstable = new TreeSet<>();
    String pkg = null;
    for (String line : Files.readAllLines(API_DOC)) {
      Matcher h = HEADING.matcher(line);
      if (h.matches()) {
        pkg = h.group(1);
        types.put(pkg, new TreeSet<>());
        if (h.group(2).contains("(unstable)")) {
          unstable.add(pkg);
        }
        continue;
      }
      Matcher e = ENTRY.matcher(line);
      if (pkg != null && e.find()) {
        Matcher n = NAME.matcher(e.group(1));
        while (n.find()) {
          types.get(pkg).add(n.group(1));
        }
      }
    }
    return new Documented(types, unstable);
  }

  /** Public, and so is every class it is nested in. */
  private static boolean isPublicApi(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
      if (!Modifier.isPublic(k.getModifiers()) || k.isSynthetic() || k.isAnonymousClass()) {
        return false;
      }
    }
    return !c.getSimpleName().equals("package-info");
  }

  /** Every class in the jar or classes directory {@code anchor} was loaded from. */
  private static List<String> classNames(Class<?> anchor) throws IOException, URISyntaxException {
    Path root = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<String> names = new ArrayList<>();
    if (Files.isDirectory(root)) {
      try (Stream<Path> files = Files.walk(root)) {
        files.map(p -> root.relativize(p).toString().replace('\\', '/'))
            .filter(PublicApiTest::isClassFile).forEach(p -> names.add(toName(p)));
      }
    } else {
      try (JarFile jar = new JarFile(root.toFile())) {
        jar.stream().map(e -> e.getName()).filter(PublicApiTest::isClassFile)
            .forEach(p -> names.add(toName(p)));
      }
    }
    assertThat(names).as("classes in " + root).isNotEmpty();
    return names;
  }

  private static boolean isClassFile(String path) {
    return path.endsWith(".class") && !path.startsWith("META-INF/")
        && !path.endsWith("module-info.class");
  }

  private static String toName(String path) {
    return path.substring(0, path.length() - ".class".length()).replace('/', '.');
  }
}
