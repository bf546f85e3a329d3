package io.affinityrouter.examples.fakevllm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PrefixCacheTest {

  @Test
  void hitsAreTheLeadingCachedBlocksOnly() {
    PrefixCache cache = new PrefixCache(4, 100);
    long[] abc = cache.blockHashes("aaaabbbbcccc");
    assertThat(abc).hasSize(3);
    assertThat(cache.lookupAndStore(abc)).isZero();
    assertThat(cache.lookupAndStore(cache.blockHashes("aaaabbbbccccdd"))).isEqualTo(3);
    assertThat(cache.lookupAndStore(cache.blockHashes("aaaabbbbddddeeee"))).isEqualTo(2);
    // Same block text after a different prefix is a different (chained) block.
    assertThat(cache.lookupAndStore(cache.blockHashes("xxxxbbbb"))).isZero();
    assertThat(cache.blockHashes("abc")).isEmpty();
  }

  @Test
  void boundedLeastRecentlyUsedFirst() {
    PrefixCache cache = new PrefixCache(4, 4);
    cache.lookupAndStore(cache.blockHashes("aaaabbbb"));
    cache.lookupAndStore(cache.blockHashes("ccccdddd"));
    assertThat(cache.size()).isEqualTo(4);
    cache.lookupAndStore(cache.blockHashes("aaaabbbb")); // refresh a, b
    cache.lookupAndStore(cache.blockHashes("eeee")); // evicts c (least recent)
    assertThat(cache.size()).isEqualTo(4);
    assertThat(cache.lookupAndStore(cache.blockHashes("aaaabbbb"))).isEqualTo(2);
    assertThat(cache.lookupAndStore(cache.blockHashes("ccccdddd"))).isZero();
    cache.clear();
    assertThat(cache.size()).isZero();
  }
}
