package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.RoutingListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A listener that throws never breaks routing, and its failure is logged, rate-limited. */
class ListenersTest {
  private final Logger logger = Logger.getLogger(Listeners.class.getName());
  private final List<LogRecord> records = new CopyOnWriteArrayList<>();
  private final Handler handler = new Handler() {
    @Override
    public void publish(LogRecord record) {
      records.add(record);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  @BeforeEach
  void capture() {
    logger.addHandler(handler);
  }

  @AfterEach
  void release() {
    logger.removeHandler(handler);
  }

  @Test
  void aThrowingListenerIsLoggedOnceAWhileAndRoutingGoesOn() {
    List<RoutingDecision> seen = new CopyOnWriteArrayList<>();
    RoutingListener broken = new RoutingListener() {
      @Override
      public void onDecision(RoutingRequest request, RoutingDecision decision, long nanos) {
        throw new IllegalStateException("listener bug");
      }
    };
    RoutingListener counting = new RoutingListener() {
      @Override
      public void onDecision(RoutingRequest request, RoutingDecision decision, long nanos) {
        seen.add(decision);
      }
    };
    try (Router router = AffinityRouter.builder().addListener(broken).addListener(counting)
        .build()) {
      for (int i = 0; i < 50; i++) {
        RoutingDecision d = router.select(RoutingRequest.builder().promptText("p" + i).build(),
            List.of(Replica.of("a")));
        assertThat(d.isRouted()).isTrue();
        d.lease().close();
      }
    }
    assertThat(seen).as("later listeners still called").hasSize(50);
    List<LogRecord> mine = records.stream()
        .filter(r -> r.getThrown() instanceof IllegalStateException).toList();
    assertThat(mine).as("one report per 10 s, not one per decision").hasSize(1);
    assertThat(mine.get(0).getLevel()).isEqualTo(Level.WARNING);
    assertThat(mine.get(0).getMessage()).contains(broken.getClass().getName());
  }
}
