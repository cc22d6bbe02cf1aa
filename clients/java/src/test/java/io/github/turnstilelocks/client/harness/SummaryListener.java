package io.github.turnstilelocks.client.harness;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Prints Surefire's summary line ("Tests run: N, Failures: F, Errors: E, Skipped: S") when the run
 * ends, because `mvn -q` silences Surefire's own (it logs it at INFO). A failed assertion counts as
 * a failure, any other exception as an error, an aborted or disabled test as skipped — as Surefire
 * counts them.
 */
public final class SummaryListener implements TestExecutionListener {
  private final AtomicInteger run = new AtomicInteger();
  private final AtomicInteger failures = new AtomicInteger();
  private final AtomicInteger errors = new AtomicInteger();
  private final AtomicInteger skipped = new AtomicInteger();
  private final java.util.Set<String> reasons = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private volatile TestPlan plan;

  @Override
  public void testPlanExecutionStarted(TestPlan testPlan) {
    plan = testPlan;
  }

  @Override
  public void executionSkipped(TestIdentifier test, String reason) {
    if (test.isTest()) {
      run.incrementAndGet();
      skipped.incrementAndGet();
    }
  }

  @Override
  public void executionFinished(TestIdentifier test, TestExecutionResult result) {
    if (!test.isTest()) {
      // A class whose @BeforeAll failed counts as one error (as Surefire counts it); one that
      // aborted (a part is missing) skips all its tests, and says why once.
      if (result.getStatus() == TestExecutionResult.Status.FAILED) errors.incrementAndGet();
      if (result.getStatus() == TestExecutionResult.Status.ABORTED && plan != null) {
        long tests = plan.getDescendants(test).stream().filter(TestIdentifier::isTest).count();
        run.addAndGet((int) tests);
        skipped.addAndGet((int) tests);
        String why = result.getThrowable().map(Throwable::getMessage).orElse("aborted");
        if (reasons.add(why)) System.out.println(why);
      }
      return;
    }
    run.incrementAndGet();
    switch (result.getStatus()) {
      case ABORTED -> skipped.incrementAndGet();
      case FAILED -> {
        if (result.getThrowable().orElse(null) instanceof AssertionError) failures.incrementAndGet();
        else errors.incrementAndGet();
      }
      default -> {}
    }
  }

  @Override
  public void testPlanExecutionFinished(TestPlan plan) {
    System.out.printf("Tests run: %d, Failures: %d, Errors: %d, Skipped: %d%n", run.get(), failures.get(), errors.get(), skipped.get());
  }
}
