package io.affinityrouter.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class PrometheusTextParserTest {

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      Fixtures.VLLM_V0_AIBRIX + "|29",
      Fixtures.VLLM_V1_LLMD + "|9",
      Fixtures.SGLANG_DOCS + "|91",
      Fixtures.SGLANG_HICACHE + "|10"})
  void everyFixtureParsesStrictlyWithTheSampleCountItsReadmeGives(String file, int samples) {
    String text = Fixtures.read(file);

    ParsedExposition strict = PrometheusTextParser.parseStrict(text);
    ParsedExposition lenient = PrometheusTextParser.parseLenient(text);

    assertThat(strict.samples()).hasSize(samples);
    assertThat(strict.skippedLines()).isZero();
    assertThat(lenient).isEqualTo(strict);
  }

  @Test
  void readsTheTruncatedAibrixHistogramAsTheSamplesThatAreThere() {
    ParsedExposition parsed =
        PrometheusTextParser.parseLenient(Fixtures.read(Fixtures.VLLM_V0_AIBRIX));

    List<MetricSample> buckets = parsed.samples().stream()
        .filter(s -> s.name().equals("vllm:iteration_tokens_total_bucket")).toList();
    assertThat(buckets).hasSize(15);
    assertThat(buckets.get(14).labels()).containsEntry("le", "96.0");
    assertThat(buckets.get(14).value()).isEqualTo(998.0);
    assertThat(parsed.samples()).noneMatch(s -> s.name().endsWith("_count"));
    assertThat(parsed.skippedLines()).isZero();
  }

  @Test
  void readsLabelsExponentsAndTimestampsOfRealLines() {
    List<MetricSample> samples =
        PrometheusTextParser.parseStrict(Fixtures.read(Fixtures.VLLM_V1_LLMD)).samples();

    MetricSample config = samples.get(samples.size() - 1);
    assertThat(config.name()).isEqualTo("vllm:cache_config_info");
    assertThat(config.labels()).hasSize(29)
        .containsEntry("num_gpu_blocks", "74272")
        .containsEntry("kv_cache_dtype_skip_layers", "[]")
        .containsEntry("num_cpu_blocks", "None");
    assertThat(config.value()).isEqualTo(1.0);
    MetricSample created = samples.stream()
        .filter(s -> s.name().equals("vllm:external_prefix_cache_queries_created"))
        .findFirst().orElseThrow();
    assertThat(created.value()).isEqualTo(1.7859669528940387e9);
    assertThat(created.timestampMillis()).isEmpty();
  }

  @Test
  void readsEscapesSpecialValuesTimestampsAndBlanks() {
    String text = "# a plain comment\n"
        + "\n"
        + "   \t \n"
        + "# HELP m_total Help with \\\\ and \\n escapes.\n"
        + "# TYPE m_total COUNTER\n"
        + "m_total{path=\"C:\\\\dir\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",} 1.5e3 1700000000000\r\n"
        + "  m2 { a = \"x\" , b=\"\" } +Inf\n"
        + "m3 -Inf -5\n"
        + "m4\tNaN\n"
        + "m5{} .5\n"
        + "m6{le=\"+Inf\"} 7E-2\t\n"
        + "m7 -0.0";

    List<MetricSample> s = PrometheusTextParser.parseStrict(text).samples();

    assertThat(s).hasSize(7);
    assertThat(s.get(0)).isEqualTo(new MetricSample("m_total",
        Map.of("path", "C:\\dir", "quote", "say \"hi\"", "nl", "a\nb"), 1500.0,
        OptionalLong.of(1_700_000_000_000L)));
    assertThat(s.get(1)).isEqualTo(
        MetricSample.of("m2", Map.of("a", "x", "b", ""), Double.POSITIVE_INFINITY));
    assertThat(s.get(2)).isEqualTo(new MetricSample("m3", Map.of(), Double.NEGATIVE_INFINITY,
        OptionalLong.of(-5)));
    assertThat(s.get(3).value()).isNaN();
    assertThat(s.get(4)).isEqualTo(MetricSample.of("m5", Map.of(), 0.5));
    assertThat(s.get(5)).isEqualTo(MetricSample.of("m6", Map.of("le", "+Inf"), 0.07));
    assertThat(Double.doubleToRawLongBits(s.get(6).value()))
        .isEqualTo(Double.doubleToRawLongBits(-0.0));
  }

  @Test
  void openMetricsTextReadsWithItsTypesExemplarsAndTimestampsInSeconds() {
    // prometheus_client 0.26's OpenMetrics exposition of a vLLM counter with an exemplar
    String text = "# HELP vllm:generation_tokens gen\n"
        + "# TYPE vllm:generation_tokens counter\n"
        + "vllm_generation_tokens_total{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 250.0 "
        + "# {trace_id=\"abc\"} 250.0 1796417768.4740248\n"
        + "vllm_generation_tokens_created{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} "
        + "1.7964177684740162e+09\n"
        + "# TYPE build info\n"
        + "# UNIT latency_seconds seconds\n"
        + "build_info{version=\"1\"} 1 1700000000.5\n"
        + "latency_seconds_bucket{le=\"1.0\"} 1.0 # {trace_id=\"x\"} 0.5\n"
        + "# EOF\n";

    List<MetricSample> s = PrometheusTextParser.parseStrict(text).samples();

    assertThat(s).extracting(MetricSample::name).containsExactly("vllm_generation_tokens_total",
        "vllm_generation_tokens_created", "build_info", "latency_seconds_bucket");
    assertThat(s.get(0).value()).isEqualTo(250.0);
    assertThat(s.get(0).timestampMillis()).as("the exemplar's time is not the sample's").isEmpty();
    assertThat(s.get(2).timestampMillis()).hasValue(1_700_000_000_500L);
    assertThat(PrometheusTextParser.parseStrict("m 1 1700000000\n# EOF").samples().get(0)
        .timestampMillis()).as("seconds, not milliseconds").hasValue(1_700_000_000_000L);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
      "m 1 # trace|line 1, column 7: 't' (expected: '{' opening the exemplar's labels)",
      "m 1 #{a=\"b\"} 1|line 1, column 6: '{' (expected: a blank after '#' opening an exemplar)",
      "m 1 # {a=\"b\"}|line 1, column 14: end of line (expected: the exemplar's value)",
      "m 1 # {a=\"b\"} 1 2 3|line 1, column 19: '3' (expected: end of line after the exemplar)",
      "m 1 x1|line 1, column 5: 'x1' (expected: a timestamp in seconds such as 1700000000.123)",
      "# TYPE m untyped|line 1, column 10: 'untyped' (expected: one of counter, gauge, histogram, summary, unknown, info, stateset, gaugehistogram as the type of m)"})
  void openMetricsProblemsAreNamedLikeAnyOther(String badLine, String message) {
    assertThatThrownBy(() -> PrometheusTextParser.parseStrict(badLine + "\n# EOF\n"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    assertThat(PrometheusTextParser.parseLenient("m 1 # {a=\"b\"} 1\n").skippedLines())
        .as("without # EOF an exemplar is not OpenMetrics").isEqualTo(1);
  }

  @Test
  void keepsLabelOrderAndRendersBackTheSameLine() {
    String line = "vllm:request_success_total{finished_reason=\"stop\","
        + "model_name=\"Qwen/Qwen2.5-Coder-1.5B-Instruct\"} 4.0";

    MetricSample sample = PrometheusTextParser.parseStrict(line).samples().get(0);

    assertThat(sample.labels().keySet()).containsExactly("finished_reason", "model_name");
    assertThat(sample.toText()).isEqualTo(line);
  }

  @Test
  void emptyTextHasNoSamples() {
    assertThat(PrometheusTextParser.parseStrict("").samples()).isEmpty();
    assertThat(PrometheusTextParser.parseStrict("\n\r\n").samples()).isEmpty();
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
      "m{a=\"x\" 1|line 3, column 9: '1' (expected: ',' or '}' after the value of label 'a')",
      "m{a=x} 1|line 3, column 5: 'x' (expected: '\"' opening the value of label 'a')",
      "m{a \"x\"} 1|line 3, column 5: '\"' (expected: '=' after label name 'a')",
      "m{a=\"x\\q\"} 1|line 3, column 8: 'q' (expected: \\\\, \\\" or \\n after a backslash in label 'a')",
      "m{a=\"x|line 3, column 7: end of line (expected: '\"' closing the value of label 'a')",
      "m{a=\"1\",a=\"2\"} 1|line 3, column 9: 'a' (expected: each label name once)",
      "m{__name__=\"n\"} 1|line 3, column 3: '__name__' (expected: a label name other than the reserved __name__)",
      "m{,} 1|line 3, column 3: ',' (expected: a label name or '}')",
      "m|line 3, column 2: end of line (expected: a value after the name)",
      "m{a=\"b\"}|line 3, column 9: end of line (expected: a value after '}')",
      "m 1x|line 3, column 3: '1x' (expected: a float such as 1, -2.5e-3, +Inf or NaN)",
      "m 0x1p3|line 3, column 3: '0x1p3' (expected: a float such as 1, -2.5e-3, +Inf or NaN)",
      "m 1e999|line 3, column 3: '1e999' (expected: a float such as 1, -2.5e-3, +Inf or NaN)",
      "m 1 1.5|line 3, column 5: '1.5' (expected: an integer timestamp in milliseconds)",
      "m 1 99999999999999999999|line 3, column 5: '99999999999999999999' (expected: an integer timestamp in milliseconds)",
      "m 1 2 3|line 3, column 7: '3' (expected: end of line after the timestamp)",
      "m! 1|line 3, column 2: '!' (expected: '{' or a blank after the metric name)",
      "1m 1|line 3, column 1: '1' (expected: a metric name, a comment or a blank line)",
      "# TYPE m countr|line 3, column 10: 'countr' (expected: one of counter, gauge, histogram, summary, untyped as the type of m)",
      "# TYPE m|line 3, column 9: end of line (expected: a blank and a type after the metric name)",
      "# TYPE m gauge x|line 3, column 16: 'x' (expected: end of line after the type)",
      "# HELP|line 3, column 7: end of line (expected: a metric name after # HELP)",
      "# HELP m bad \\d escape|line 3, column 15: 'd' (expected: \\\\ or \\n after a backslash in the help text)"})
  void strictModeNamesTheLineColumnAndWhatWasExpected(String badLine, String message) {
    String text = "# TYPE ok gauge\nok 1\n" + badLine + "\nafter 2\n";

    assertThatThrownBy(() -> PrometheusTextParser.parseStrict(text))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  @ParameterizedTest
  @ValueSource(strings = {"m{a=\"x\" 1", "m 1x", "# TYPE m countr", "m{a=\"1\",a=\"2\"} 1", "{} 1"})
  void lenientModeSkipsAndCountsTheBadLineAndKeepsTheRest(String badLine) {
    String text = "ok 1\r\n" + badLine + "\r\n" + badLine + "\r\nafter 2";

    ParsedExposition parsed = PrometheusTextParser.parseLenient(text);

    assertThat(parsed.skippedLines()).isEqualTo(2);
    assertThat(parsed.firstProblem()).hasValueSatisfying(p -> assertThat(p).startsWith("line 2,"));
    assertThat(parsed.samples()).extracting(MetricSample::name).containsExactly("ok", "after");
  }

  @Test
  void controlCharactersInAProblemAreEscapedAndLongTokensShortened() {
    String token = "x".repeat(100);

    assertThatThrownBy(() -> PrometheusTextParser.parseStrict("m " + token))
        .hasMessage("line 1, column 3: '" + "x".repeat(40) + "...' (expected: a float such as 1,"
            + " -2.5e-3, +Inf or NaN)");
    assertThatThrownBy(() -> PrometheusTextParser.parseStrict("m{a\u0001=\"\"} 1"))
        .hasMessageStartingWith("line 1, column 4: '\\u0001' (expected:");
  }

  @Test
  void sampleRefusesInvalidNamesWithAnArgumentError() {
    assertThatThrownBy(() -> MetricSample.of("1bad", Map.of(), 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("name: '1bad' (expected: a metric name, [a-zA-Z_:][a-zA-Z0-9_:]*)");
    assertThatThrownBy(() -> MetricSample.of("ok", Map.of("a-b", "x"), 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("label name: 'a-b' (expected: [a-zA-Z_][a-zA-Z0-9_]*, not __name__)");
  }
}
