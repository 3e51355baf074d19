/**
 * Long (concatenated) SMS: a wallet SMS longer than one SMS arrives as parts,
 * each with a User Data Header naming the set's reference, the part's index
 * and the set's count (3GPP TS 23.040, IEI 0x00 8-bit or 0x08 16-bit
 * reference). Join the parts received together before screening and
 * forwarding; forward only a part whose set is incomplete, with `part`, and
 * the service joins it with the rest (docs/matching.md, "Long SMS").
 */

/** The concatenation fields of a part's User Data Header. */
export interface SmsPartHeader {
  reference: number;
  index: number;
  count: number;
}

/** What joining reads of a message; every other field is kept as it is. */
export interface JoinableSms {
  device_message_id: string;
  sender: string;
  body: string;
  received_at: string;
  sim_slot?: number | null | undefined;
  part?: SmsPartHeader | null | undefined;
}

/**
 * Joins the parts among `messages` whose sets are complete (same sender exactly
 * as received, SIM slot, reference and count; every index from 1 to count),
 * pure and in place of the set's first part: one message with the texts in
 * index order and no separator (a header splits the text anywhere), the
 * earliest `received_at`, part 1's `device_message_id` and other fields, and
 * no `part`. A part repeated (same set and index) counts once. Whole messages,
 * and the parts of sets still incomplete (forward those with their `part`),
 * are returned unchanged, in input order.
 */
export function joinSmsParts<T extends JoinableSms>(messages: readonly T[]): T[] {
  const key = (m: T) => (m.part ? JSON.stringify([m.sender, m.sim_slot ?? null, m.part.reference, m.part.count]) : null);
  const sets = new Map<string, Map<number, T>>();
  for (const m of messages) {
    const k = key(m);
    if (k === null) continue;
    const set = sets.get(k) ?? new Map<number, T>();
    sets.set(k, set);
    if (!set.has(m.part!.index)) set.set(m.part!.index, m);
  }
  const complete = (k: string) => {
    const set = sets.get(k)!;
    const count = [...set.values()][0]!.part!.count;
    for (let i = 1; i <= count; i++) if (!set.has(i)) return null;
    return Array.from({ length: count }, (_, i) => set.get(i + 1)!);
  };
  const done = new Set<string>();
  const out: T[] = [];
  for (const m of messages) {
    const k = key(m);
    if (k === null) {
      out.push(m);
      continue;
    }
    const parts = complete(k);
    if (parts === null) {
      out.push(m);
      continue;
    }
    if (done.has(k)) continue;
    done.add(k);
    const earliest = parts.reduce((a, b) => (Date.parse(b.received_at) < Date.parse(a.received_at) ? b : a));
    const { part: _part, ...first } = parts[0]!;
    out.push({ ...first, body: parts.map((p) => p.body).join(''), received_at: earliest.received_at } as T);
  }
  return out;
}
