// Module boundaries of STYLE.md §2, checked by `npm test` (`npm run lint:deps`) and CI.
// Order of dependence: identity ← workspace ← card-hierarchy ← fields, grouping (siblings) ← cards ← import.
// Each layer may depend only on the layers before it; siblings not on each other.
// web (the pages and /oauth/* on AUTH_URL) is beside them: it depends on identity only, and no module depends on it.
const layers = [['identity'], ['workspace'], ['card-hierarchy'], ['fields', 'grouping'], ['cards'], ['import']];

const downstreamRules = layers.flatMap((layer, i) =>
  layer.map((mod) => {
    const forbidden = [...layer.filter((m) => m !== mod), ...layers.slice(i + 1).flat()];
    return {
      name: `no-upstream-calls-from-${mod}`,
      comment:
        `${mod} may not depend on ${forbidden.join(', ') || 'nothing downstream'}: ` +
        'report changes with events, or let `cards` compose the use case.',
      severity: 'error',
      from: { path: `^src/modules/${mod}/` },
      to: { path: `^src/modules/(${forbidden.join('|') || '$^'})/` },
    };
  }),
);

module.exports = {
  forbidden: [
    {
      name: 'only-through-index',
      comment: 'Another module is imported only through its index.ts (its public API).',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/.+', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'shared-kernel-stands-alone',
      comment: 'The shared kernel holds no business rules and depends on no module.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...downstreamRules,
    {
      name: 'web-depends-on-identity-only',
      comment: 'web (browser sessions, the pages, OAuth) may import identity and the shared kernel, no other module.',
      severity: 'error',
      from: { path: '^src/modules/web/' },
      to: { path: '^src/modules/', pathNot: '^src/modules/(web|identity)/' },
    },
    {
      name: 'nothing-depends-on-web',
      comment: 'No module imports web: it is a client of identity, as a browser is of the API.',
      severity: 'error',
      from: { path: '^src/modules/', pathNot: '^src/modules/web/' },
      to: { path: '^src/modules/web/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.(int-)?spec\\.ts$' },
  },
};
