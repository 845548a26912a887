/** Comparing simulations made apart: their random ids (calls, activeflows, actions) named by first appearance. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

export function normalizeSim(result: unknown): unknown {
  const names = new Map<string, string>();
  const text = JSON.stringify(result).replace(UUID, (u) => {
    if (/^0{8}-/.test(u)) return u;
    let n = names.get(u);
    if (!n) names.set(u, (n = `uuid-${names.size + 1}`));
    return n;
  });
  return JSON.parse(text) as unknown;
}
