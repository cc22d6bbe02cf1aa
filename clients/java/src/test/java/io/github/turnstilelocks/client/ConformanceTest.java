package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import io.github.turnstilelocks.client.harness.Json;
import io.github.turnstilelocks.client.harness.Requirements;
import io.github.turnstilelocks.client.harness.ScenarioDriver;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Java driver of the shared client conformance suite (test/conformance/README.md): one dynamic
 * test per file of test/conformance/scenarios, run by {@link ScenarioDriver} against this client and
 * a real coordinator and redis-server, as the TypeScript and Go drivers run the same files; and the
 * client's constants against test/conformance/constants.json.
 */
@ExtendWith(FleetExtension.class)
class ConformanceTest {
  private static Path suite() {
    return Requirements.repo().resolve("test/conformance");
  }

  @TestFactory
  Stream<DynamicTest> scenarios(Fleet fleet) throws Exception {
    List<Path> files;
    try (Stream<Path> listed = Files.list(suite().resolve("scenarios"))) {
      files = listed.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
    if (files.isEmpty()) throw new AssertionError("no scenarios in " + suite().resolve("scenarios"));
    return files.stream().map(file -> {
      String id = file.getFileName().toString().replaceFirst("\\.json$", "");
      return DynamicTest.dynamicTest(id, file.toUri(), () -> {
        @SuppressWarnings("unchecked")
        Map<String, Object> scenario = (Map<String, Object>) Json.parse(Files.readString(file));
        try (ScenarioDriver driver = new ScenarioDriver(fleet)) {
          driver.run(scenario);
        }
      });
    });
  }

  @Test
  @SuppressWarnings("unchecked")
  void theClientsLeaseMarginAnswerGraceAndBackoffsAreTheSharedOnes() throws Exception {
    Map<String, Object> shared = (Map<String, Object>) Json.parse(Files.readString(suite().resolve("constants.json")));
    Map<String, Object> margin = (Map<String, Object>) shared.get("leaseMargin");
    List<Long> margins = new ArrayList<>();
    List<Long> wantMargins = new ArrayList<>();
    for (Object o : (List<Object>) margin.get("examples")) {
      Map<String, Object> example = (Map<String, Object>) o;
      margins.add(TimeUnit.NANOSECONDS.toMillis(new LeaseClock(TimeUnit.MILLISECONDS.toNanos((Long) example.get("ttlMs"))).marginNanos()));
      wantMargins.add((Long) example.get("marginMs"));
    }
    assertEquals(wantMargins, margins, "lease margins of the examples");

    Map<String, Long> own = new LinkedHashMap<>();
    own.put("leaseMargin.capMs", TimeUnit.NANOSECONDS.toMillis(new LeaseClock(TimeUnit.HOURS.toNanos(1)).marginNanos()));
    own.put("answerGraceMs", AcquireDeadlines.ANSWER_GRACE_MS);
    own.put("resumeBackoff.firstMs", constant(Resumer.class, "FIRST_BACKOFF_MS"));
    own.put("resumeBackoff.maxMs", constant(Resumer.class, "MAX_BACKOFF_MS"));
    own.put("watchBackoff.firstMs", constant(LeaderWatch.class, "FIRST_BACKOFF_MS"));
    own.put("watchBackoff.maxMs", constant(LeaderWatch.class, "MAX_BACKOFF_MS"));
    Map<String, Long> want = new LinkedHashMap<>();
    for (String key : own.keySet()) {
      String[] path = key.split("\\.");
      want.put(key, (Long) (path.length == 1 ? shared.get(key) : ((Map<String, Object>) shared.get(path[0])).get(path[1])));
    }
    Map<String, Object> divergences = (Map<String, Object>) ((Map<String, Object>) shared.get("divergences")).getOrDefault("java", Map.of());
    for (Map.Entry<String, Object> d : divergences.entrySet()) {
      if (d.getValue().equals(want.get(d.getKey())))
        throw new AssertionError("divergences.java." + d.getKey() + " = " + d.getValue() + " is the shared value: delete the entry");
      want.put(d.getKey(), (Long) d.getValue());
    }
    assertEquals(want, own, "the Java client's constants (constants.json with divergences.java)");
  }

  /** A private static long constant of the client, read by reflection (the client keeps them private). */
  private static long constant(Class<?> owner, String name) throws ReflectiveOperationException {
    Field field = owner.getDeclaredField(name);
    field.setAccessible(true);
    return field.getLong(null);
  }
}
