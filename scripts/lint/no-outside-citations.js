/**
 * Comments must stand alone: a reader of this repository cannot open documents
 * kept outside it, and an issue tracker's numbers mean nothing to them. A rule
 * the code follows is written in the repository's own docs (README.md,
 * SECURITY.md, BENCHMARKS.md, docs/*.md) and the comment points there.
 * An upstream project's issue written as `owner/repo#123` stays allowed: it is a
 * public, stable reference to someone else's bug.
 */
const outsideDocs = [
  { re: /\.\.\/shared\b/, what: 'a document outside the repository (../shared)' },
  { re: /\bshared\/[\w-]+\.md\b/, what: 'a document outside the repository (shared/)' },
  { re: /\bdesign\.md\b/i, what: 'design.md, which is not in the repository' },
  { re: /\bservice-spec(\.md)?\b/i, what: 'service-spec.md, which is not in the repository' },
  { re: /\bconventions\.md\b/i, what: 'conventions.md, which is not in the repository' },
  { re: /\bthe spec('s)?\b/i, what: 'the service spec, which is not in the repository' },
  { re: /\bthe issue's\b/i, what: 'an issue' },
  { re: /\b(issues?|tickets?|bugs?)\s*#?\d+\b/i, what: 'an issue number' },
  { re: /(^|[^\w/#&])#\d+\b/, what: 'an issue number' },
];

/** @type {import('eslint').Rule.RuleModule} */
export const noOutsideCitations = {
  meta: {
    type: 'problem',
    docs: { description: 'comments cite no documents outside the repository and no issue numbers' },
    schema: [],
    messages: { cite: 'Comment cites {{what}}; say the reason here or point to the repository docs (docs/*.md, SECURITY.md, README.md, BENCHMARKS.md).' },
  },
  create(context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          // An upstream `owner/repo#123` is removed before testing, so it never counts.
          const text = comment.value.replace(/[\w.-]+\/[\w.-]+#\d+/g, '');
          const hit = outsideDocs.find((d) => d.re.test(text));
          if (hit) context.report({ loc: comment.loc, messageId: 'cite', data: { what: hit.what } });
        }
      },
    };
  },
};
