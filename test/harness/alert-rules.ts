import { readFileSync } from "node:fs";
import { load } from "js-yaml";

/** One alerting rule of deploy/prometheus/alerts.yml. */
export interface AlertRule {
  alert: string;
  expr: string;
  labels?: { severity?: string };
}

/** Every alerting rule in deploy/prometheus/alerts.yml, in file order. */
export function alertRules(): AlertRule[] {
  const text = readFileSync(new URL("../../deploy/prometheus/alerts.yml", import.meta.url), "utf8");
  const file = load(text) as { groups: { rules: AlertRule[] }[] };
  return file.groups.flatMap((g) => g.rules);
}

/** The expression of the alert named `alert`; throws when the rule file has no such alert. */
export function alertExpr(alert: string): string {
  const rule = alertRules().find((r) => r.alert === alert);
  if (!rule) throw new Error(`deploy/prometheus/alerts.yml has no alert ${alert}`);
  return rule.expr;
}
