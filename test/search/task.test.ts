/** What a task holds besides its request: values, their kinds, clauses (server/search/task.ts). */
import { describe, expect, it } from 'vitest';
import { readQuery, term } from '../../server/search/analyze.ts';
import { splitTask } from '../../server/search/task.ts';

const noPhrase = () => false;

describe('splitTask', () => {
  it('takes quoted text, what follows a colon and a name after "called" as values', () => {
    expect(splitTask(`add 'prepare Q3 deck' to my list`, noPhrase)).toEqual({
      words: ['add', 'to', 'my', 'list'],
      firstClause: 4,
      values: ['prepare', 'Q3', 'deck'],
      implied: [],
    });
    expect(splitTask('file a ticket: checkout page times out', noPhrase)).toEqual({
      words: ['file', 'a', 'ticket'],
      firstClause: 3,
      values: ['checkout', 'page', 'times', 'out'],
      implied: [],
    });
    // "called" names no call; the name after it is a value.
    expect(splitTask('make a label called Receipts', noPhrase)).toEqual({
      words: ['make', 'a', 'label'],
      firstClause: 3,
      values: ['Receipts'],
      implied: [],
    });
    // Words of time say when, not what.
    expect(splitTask('Acme paid yesterday, record it on Monday', noPhrase).values).toEqual([
      'yesterday',
      'Monday',
    ]);
    // An apostrophe inside a word opens no quote; curly and double quotes do.
    expect(splitTask("don't send Tom's “weekly report” yet", noPhrase)).toEqual({
      words: ["don't", 'send', "Tom's", 'yet'],
      firstClause: 4,
      values: ['weekly', 'report'],
      implied: [],
    });
    // A colon of the first word only ("Note: …") is not a request followed by content.
    expect(splitTask('note: read this', noPhrase).values).toEqual(['note:']);
  });

  it('tells a hyphenated name from a hyphenated phrase', () => {
    expect(splitTask('tear down the team-ml namespace', noPhrase).values).toEqual(['team-ml']);
    expect(splitTask('thumbs-up that message', (chunk) => chunk === 'thumbs-up').values).toEqual([]);
  });

  it('names what kind of thing a value is', () => {
    const implied = (text: string) => splitTask(text, noPhrase).implied;
    expect(implied('share contract.pdf with the client')).toEqual(['file', 'document']);
    expect(implied('upload vlog.mp4')).toEqual(['file', 'video']);
    expect(implied('send it to ana@site.io')).toEqual(['email']);
    expect(implied('rename acme/old-name')).toEqual(['repository']);
    expect(implied('what was said in #incidents?')).toEqual(['channel']);
    expect(implied('charge $20')).toEqual(['amount']);
    expect(implied('a 25% off code')).toEqual(['percent']);
    expect(implied('text +1 415 555 0100')).toEqual([]);
    expect(implied('text +14155550100')).toEqual(['phone', 'number']);
    expect(implied('point api.example.com at 203.0.113.10')).toEqual(['domain', 'ip', 'address']);
    expect(implied('link PAY-142 to PAY-7')).toEqual(['issue', 'key']);
    expect(implied('open https://example.com/a')).toEqual(['url', 'link']);
  });

  it('ends the first clause at a comma or a word that gives a reason', () => {
    expect(splitTask("delete the old branch, it's merged", noPhrase).firstClause).toBe(4);
    expect(splitTask('cordon the node so nothing lands on it', noPhrase).firstClause).toBe(3);
    expect(splitTask('list the open issues', noPhrase).firstClause).toBe(4);
  });

  it('reads a huge task in bounded time', () => {
    const started = performance.now();
    const parts = splitTask(`'${"a' ".repeat(50_000)}`, noPhrase);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(parts.words.length + parts.values.length).toBeLessThan(2_000);
  });
});

describe('readQuery with task parts', () => {
  it('matches a phrase in any form of its words, and reads a later clause and values at less weight', () => {
    // The thesaurus says "chargeback"; the task says "chargebacks".
    expect(readQuery('how many chargebacks this month').terms.get(term('dispute') as string)).toBeGreaterThan(
      0,
    );
    const query = readQuery("delete the old branch, it's merged");
    expect(query.terms.get(term('branch') as string)).toBe(1);
    expect(query.terms.get(term('merged') as string)).toBeLessThan(1);
    expect(query.methods).toEqual(new Set(['DELETE']));
    expect(readQuery('share contract.pdf').terms.get('file')).toBe(0.5);
  });

  it('keeps the words of a task as written for near spellings', () => {
    expect(readQuery('edit my work calender').spelled.get(term('calender') as string)).toBe('calender');
    expect(readQuery('edit my work').spelled.has('work')).toBe(false);
  });
});
