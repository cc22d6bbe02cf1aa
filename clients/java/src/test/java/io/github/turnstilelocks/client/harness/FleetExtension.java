package io.github.turnstilelocks.client.harness;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives test methods the run's {@link Fleet}, started on first use and closed by JUnit when the run
 * ends (it lives in the root store). Checks {@link Requirements} first: a test class is skipped
 * (or, in CI, failed) when redis-server, node or the built coordinator is missing.
 */
public final class FleetExtension implements BeforeAllCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(FleetExtension.class);

  @Override
  public void beforeAll(ExtensionContext context) {
    Requirements.check();
    fleet(context);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == Fleet.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return fleet(context);
  }

  private static Fleet fleet(ExtensionContext context) {
    return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent("fleet", key -> {
      try {
        return Fleet.start();
      } catch (Exception e) {
        throw new IllegalStateException("could not start redis-server and a coordinator: " + e.getMessage(), e);
      }
    }, Fleet.class);
  }
}
