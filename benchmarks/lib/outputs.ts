// Every contender must transcribe a clip to the same thing (same model, same
// decoding): the first answer for each clip length is the reference, and any
// later answer that differs (token ids where both sides return them, else the
// text without whitespace) is a mismatch. The run reports them and fails.
import type { Reply } from './servers';

interface Reference {
  who: string;
  text: string;
  tokens: number[] | null;
}

export interface Mismatch {
  clipSeconds: number;
  reference: string;
  other: string;
  what: 'tokens' | 'text';
  referenceText: string;
  otherText: string;
}

const squeeze = (text: string) => text.replace(/\s+/g, '');

export class OutputCheck {
  private readonly references = new Map<string, Reference>();
  readonly mismatches: Mismatch[] = [];
  /** Answers compared, per contender. */
  readonly checked = new Map<string, number>();

  /** `scope` separates models (a clip's reference holds within one model). */
  record(scope: string, clipSeconds: number, who: string, reply: Pick<Reply, 'text' | 'tokens'>): void {
    const key = `${scope}/${clipSeconds}`;
    this.checked.set(who, (this.checked.get(who) ?? 0) + 1);
    const ref = this.references.get(key);
    if (!ref) {
      this.references.set(key, { who, text: reply.text, tokens: reply.tokens });
      return;
    }
    // Tokens whenever both have them, otherwise the text. Once a reference has
    // tokens, a text-only answer (whisper-cli) is compared by text.
    const byTokens = ref.tokens !== null && reply.tokens !== null;
    const same = byTokens ? ref.tokens!.join(',') === reply.tokens!.join(',') : squeeze(ref.text) === squeeze(reply.text);
    if (!same) {
      this.mismatches.push({ clipSeconds, reference: ref.who, other: who, what: byTokens ? 'tokens' : 'text', referenceText: ref.text, otherText: reply.text });
    }
  }
}
