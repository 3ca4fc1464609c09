// Which words of a turn still being heard may be sent as deltas. Each draft
// decode of the turn so far gives a text that may change as more audio
// arrives, and a delta cannot be taken back, so a word is sent only once two
// drafts in a row agree on it and on every word before it (the local
// agreement policy of Macháček et al., whisper_streaming), and never the last
// word of either draft: where a draft's audio is cut, Whisper tends to end
// the sentence ("Americans." where the turn goes on "Americans, ask"), so
// that word waits for a draft that reaches past it. When the turn ends,
// its full decode is the transcript (`.completed`); when it begins with
// exactly the text sent, the rest of it is the last delta, so the deltas
// joined are the transcript, character for character. Where it does not, no
// further delta is sent, and `.completed` carries the text.
export class AgreedWords {
  private previous: string[] = [];
  private sent: string[] = [];
  /** Whether the full decode agreed with every word sent (known once finish() ran). */
  agreed = true;

  /** A draft of the turn so far: the words newly agreed, as the next delta ('' when none). */
  draft(text: string): string {
    const words = wordsOf(text);
    // Agreed words short of either draft's last word.
    const reach = Math.min(words.length, this.previous.length) - 1;
    let common = 0;
    while (common < reach && words[common] === this.previous[common]) common++;
    this.previous = words;
    // Agreement that does not reach past what was sent, or departs from it, sends nothing.
    if (common <= this.sent.length || !startsWith(words, this.sent)) return '';
    return this.send(words.slice(this.sent.length, common));
  }

  /** The turn's full decode: what it adds after the text sent, as the last delta ('' when nothing, or when it departs). */
  finish(text: string): string {
    const sent = this.sentText();
    this.agreed = text.startsWith(sent);
    return this.agreed ? text.slice(sent.length) : '';
  }

  /** Whether any delta has been sent (a turn dropped after that was shown, and is charged for it). */
  get shown(): boolean {
    return this.sent.length > 0;
  }

  /** The deltas sent, joined. */
  private sentText(): string {
    return this.sent.join(' ');
  }

  private send(words: string[]): string {
    if (words.length === 0) return '';
    const delta = (this.sent.length ? ' ' : '') + words.join(' ');
    this.sent.push(...words);
    return delta;
  }
}

const wordsOf = (text: string): string[] => text.trim().split(/\s+/).filter(Boolean);

const startsWith = (words: string[], prefix: string[]): boolean => prefix.every((w, i) => words[i] === w);
