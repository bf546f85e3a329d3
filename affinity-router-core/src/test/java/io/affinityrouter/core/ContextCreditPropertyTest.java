package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import io.affinityrouter.spi.SessionContext;
import org.junit.jupiter.api.Test;

/** The credit another router's session context gives a replica, as it ages. */
class ContextCreditPropertyTest {
  private static final int BLOCK = 16;

  @Test
  void theCreditIsWholeUntilTheCacheLifetimeAndNoneAfterAndNeverGrowsWithAge() {
    qt().withExamples(2000).forAll(longs().all(), integers().between(1, 400),
            doubles().between(0.001, 3600), longs().between(0, 7_200_000))
        .checkAssert((seed, anchor, lifetime, age) -> {
          int output = (int) Math.floorMod(seed, 4001L);
          long[] prompt = PrefixIndexTest.chain(seed, anchor + 50);
          int promptTokens = (anchor + 50) * BLOCK;
          SessionContext written = new SessionContext(7, anchor * BLOCK, output, anchor,
              prompt[anchor - 1]);
          long whole = Math.min(promptTokens, (long) anchor * BLOCK + output);
          long credit = Score.contextCredit(prompt, anchor + 50, promptTokens,
              written.aged(age), lifetime);
          long older = Score.contextCredit(prompt, anchor + 50, promptTokens,
              written.aged(age + 1 + (age >> 1)), lifetime);
          assertThat(credit).isEqualTo(age <= lifetime * 1000 ? whole : 0);
          assertThat(older).isLessThanOrEqualTo(credit);
          assertThat(Score.contextCredit(prompt, anchor + 50, promptTokens, written, lifetime))
              .isEqualTo(whole);
          // Without a known lifetime (capacity unknown, nothing written) the context does not age.
          assertThat(Score.contextCredit(prompt, anchor + 50, promptTokens, written.aged(age),
              Double.NaN)).isEqualTo(whole);
        });
  }

  @Test
  void aPromptThatDoesNotExtendTheContextGetsNothing() {
    qt().withExamples(1000).forAll(longs().all(), integers().between(1, 400),
            integers().between(0, 399))
        .checkAssert((seed, anchor, cut) -> {
          long[] context = PrefixIndexTest.chain(seed, anchor);
          long[] other = PrefixIndexTest.chain(seed + 1, anchor + 10);
          SessionContext written = new SessionContext(7, anchor * BLOCK, 100, anchor,
              context[anchor - 1]);
          assertThat(Score.contextCredit(other, anchor + 10, (anchor + 10) * BLOCK, written,
              Double.POSITIVE_INFINITY)).isZero();
          // A prompt shorter than the context's (a truncated history) cannot show it extends it.
          int shorter = Math.min(cut, anchor - 1);
          assertThat(Score.contextCredit(context, shorter, shorter * BLOCK, written,
              Double.POSITIVE_INFINITY)).isZero();
        });
  }
}
