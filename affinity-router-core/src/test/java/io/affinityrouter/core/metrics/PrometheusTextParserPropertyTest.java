package io.affinityrouter.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;
import static org.quicktheories.generators.SourceDSL.maps;
import static org.quicktheories.generators.SourceDSL.strings;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

class PrometheusTextParserPropertyTest {
  private static final int EXAMPLES = 1_200;
  /** QuickTheories may run a few examples fewer than asked; at least this many must run. */
  private static final int MIN_CASES = 1_000;

  /** Pieces of the format, so that random text often gets deep into a line before it breaks. */
  private static final List<String> FRAGMENTS = List.of("vllm:num_requests_running",
      "sglang_token_usage", "m", "_", ":", "{", "}", "model_name", "le", "=", "\"", "\\", "\\\"",
      "\\n", "\\x", "\n", "\r\n", "\r", ",", " ", "\t", "1", "0.5", "-2.5e-3", "1e", "e+9", ".",
      "+Inf", "-inf", "NaN", "Infinity", "0x1p3", "1_000", "99999999999999999999", "-", "#",
      "# HELP ", "# TYPE ", "gauge", "counter", "__name__", "é", "\u0000", "\uD800", "😀");

  private static final String NAME_START = "abcxyzABZ_:";
  private static final String NAME_PART = NAME_START + "0189";

  @Test
  void anyTextGivesSamplesOrAnArgumentErrorAndBothModesAgree() {
    Gen<String> assembled = lists().of(Generate.pick(FRAGMENTS)).ofSizeBetween(0, 40)
        .map(parts -> String.join("", parts));
    Gen<String> arbitrary = strings().allPossible().ofLengthBetween(0, 120);
    AtomicInteger cases = new AtomicInteger();

    qt().withExamples(EXAMPLES).forAll(assembled.mix(arbitrary)).checkAssert(text -> {
      cases.incrementAndGet();
      assertModesAgree(text);
    });

    assertThat(cases.get()).isGreaterThanOrEqualTo(MIN_CASES);
  }

  @Test
  void aRenderedSampleParsesBackToTheSameSample() {
    AtomicInteger cases = new AtomicInteger();

    qt().withExamples(EXAMPLES).forAll(lists().of(samples()).ofSizeBetween(1, 4), booleans().all())
        .checkAssert((samples, crlf) -> {
          cases.incrementAndGet();
          String text = samples.stream().map(MetricSample::toText)
              .collect(Collectors.joining(crlf ? "\r\n" : "\n"));

          ParsedExposition parsed = PrometheusTextParser.parseStrict(text);

          assertThat(parsed.samples()).isEqualTo(samples);
          for (int i = 0; i < samples.size(); i++) {
            assertThat(Double.doubleToLongBits(parsed.samples().get(i).value()))
                .isEqualTo(Double.doubleToLongBits(samples.get(i).value()));
          }
        });

    assertThat(cases.get()).isGreaterThanOrEqualTo(MIN_CASES);
  }

  @Test
  void oneCharacterEditOfARealScrapeCostsAtMostTwoLines() {
    List<String> fixtures = List.of(Fixtures.EXPOSITIONS).stream().map(Fixtures::read).toList();
    List<Integer> sampleCounts = fixtures.stream()
        .map(t -> PrometheusTextParser.parseStrict(t).samples().size()).toList();
    Gen<String> replacement = Generate.pick(FRAGMENTS).mix(strings().ascii().ofLength(1));
    AtomicInteger cases = new AtomicInteger();

    qt().withExamples(EXAMPLES).forAll(integers().between(0, fixtures.size() - 1),
        integers().between(0, Integer.MAX_VALUE), integers().between(0, 2), replacement)
        .checkAssert((file, at, edit, insert) -> {
          cases.incrementAndGet();
          String original = fixtures.get(file);
          int pos = at % original.length();
          String mutated = original.substring(0, pos)
              + (edit == 0 ? "" : insert) // 0 delete, 1 replace, 2 insert
              + original.substring(edit == 2 ? pos : pos + 1);

          ParsedExposition lenient = assertModesAgree(mutated);

          assertThat(lenient.skippedLines()).isLessThanOrEqualTo(2);
          assertThat(lenient.samples().size())
              .isBetween(sampleCounts.get(file) - 2, sampleCounts.get(file) + 1);
        });

    assertThat(cases.get()).isGreaterThanOrEqualTo(MIN_CASES);
  }

  /**
   * Strict either throws an {@link IllegalArgumentException} with the message lenient keeps as its
   * first problem, or returns what lenient returns with nothing skipped; any other exception fails.
   * Mapping the lenient result to engine figures never throws.
   */
  private static ParsedExposition assertModesAgree(String text) {
    ParsedExposition lenient = PrometheusTextParser.parseLenient(text);
    Throwable thrown = catchThrowable(() -> {
      ParsedExposition strict = PrometheusTextParser.parseStrict(text);
      assertThat(strict).isEqualTo(lenient);
      assertThat(lenient.skippedLines()).isZero();
    });
    if (thrown != null) {
      assertThat(thrown).isExactlyInstanceOf(IllegalArgumentException.class);
      assertThat(lenient.skippedLines()).isPositive();
      assertThat(lenient.firstProblem()).hasValue(thrown.getMessage());
    }
    EngineMetrics.of(lenient);
    return lenient;
  }

  private static Gen<MetricSample> samples() {
    Gen<String> name = Generate.pick(chars(NAME_START))
        .zip(lists().of(Generate.pick(chars(NAME_PART))).ofSizeBetween(0, 30),
            (first, rest) -> first + String.join("", rest));
    Gen<String> labelName = Generate.pick(chars("abyzAZ_"))
        .zip(lists().of(Generate.pick(chars("abz_09"))).ofSizeBetween(0, 10),
            (first, rest) -> first + String.join("", rest))
        .assuming(n -> !n.equals("__name__"));
    Gen<String> labelValue = strings().allPossible().ofLengthBetween(0, 20)
        .mix(lists().of(Generate.pick(List.of("\\", "\"", "\n", "\r", "{", "}", ",", "=", " ",
            "\\n", "😀"))).ofSizeBetween(0, 8).map(parts -> String.join("", parts)));
    Gen<Map<String, String>> labels = maps().of(labelName, labelValue).ofSizeBetween(0, 5);
    Gen<Double> value = doubles().any().mix(Generate.pick(List.of(Double.NaN,
        Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0, 0.0, Double.MIN_VALUE,
        Double.MAX_VALUE, -Double.MAX_VALUE, 1e-310, 8.128902e6, 0.07500000000000001)));
    Gen<OptionalLong> timestamp = longs().all().map(OptionalLong::of)
        .mix(Generate.constant(OptionalLong.empty()));
    return name.zip(labels, value, timestamp, MetricSample::new);
  }

  private static List<String> chars(String s) {
    return s.chars().mapToObj(c -> String.valueOf((char) c)).toList();
  }
}
