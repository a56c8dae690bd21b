// Quota usage: one item per project (pk QUOTA#<project>, sk USAGE, beside the project's quota item),
// one counter per quota field. Every change that creates or deletes objects adds to it in the same
// transaction as its own writes; with limits, the add is conditioned so that no field it raises
// ends above its limit, which makes the check atomic across concurrent requests of any LB.
import { QuotaExceeded, type QuotaCharge, type QuotaField } from "@ottava/core";

export const usageKey = (project: string) => ({ pk: `QUOTA#${project}`, sk: "USAGE" });

const unlimited = (limit: number | null | undefined) => limit === undefined || limit === null || limit < 0;

/** The transaction item for a charge, or undefined when it changes nothing. Throws QuotaExceeded when a single request alone exceeds a limit. */
export function usageUpdate(table: string, charge: QuotaCharge | undefined) {
  if (!charge) return undefined;
  const entries = Object.entries(charge.delta).filter(([, n]) => n !== undefined && n !== 0) as [QuotaField, number][];
  if (entries.length === 0) return undefined;
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  const adds: string[] = [];
  const conditions: string[] = [];
  const over: QuotaField[] = [];
  entries.forEach(([field, n], i) => {
    names[`#u${i}`] = field;
    values[`:u${i}`] = n;
    adds.push(`#u${i} :u${i}`);
    const limit = charge.limits?.[field];
    const checked = charge.check?.[field] ?? n;
    if (checked > 0 && !unlimited(limit)) {
      if (checked > limit!) over.push(field);
      values[`:max${i}`] = limit! - checked;
      conditions.push(`(attribute_not_exists(#u${i}) OR #u${i} <= :max${i})`);
    }
  });
  if (over.length > 0) throw new QuotaExceeded(over);
  return {
    TableName: table,
    Key: usageKey(charge.project),
    UpdateExpression: `ADD ${adds.join(", ")}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ...(conditions.length
      ? { ConditionExpression: conditions.join(" AND "), ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const }
      : {}),
  };
}

/** The fields of a refused charge that were over their limits, from the usage item as it was. */
export function exceededFields(charge: QuotaCharge, old: Record<string, unknown> | undefined): QuotaField[] {
  const fields = Object.entries({ ...charge.delta, ...charge.check }).filter(([f, n]) => {
    const limit = charge.limits?.[f as QuotaField];
    return n !== undefined && n > 0 && !unlimited(limit) && Number(old?.[f] ?? 0) + n > limit!;
  });
  return fields.map(([f]) => f as QuotaField);
}
