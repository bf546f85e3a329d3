package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.eclipse.jetty.http.HttpFields;
import org.junit.jupiter.api.Test;

/** The resend count read from the SDKs' header: a hint, so anything else reads as a first send. */
class RequestHeadersTest {
  private static int retries(String value) {
    HttpFields.Mutable h = HttpFields.build();
    if (value != null) {
      h.add("X-Stainless-Retry-Count", value);
    }
    return RequestHeaders.retries(h);
  }

  @Test
  void theSdksRetryCountIsReadAndAnythingElseIsAFirstSend() {
    assertThat(retries("0")).isZero();
    assertThat(retries("2")).isEqualTo(2);
    assertThat(retries("123456789")).isEqualTo(123_456_789);
    assertThat(retries(null)).isZero();
    assertThat(retries("")).isZero();
    assertThat(retries("-1")).isZero();
    assertThat(retries("1.5")).isZero();
    assertThat(retries(" 1")).isZero();
    assertThat(retries("9999999999")).as("beyond an int").isZero();
  }
}
