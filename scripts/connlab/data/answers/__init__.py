"""Each article's short answer and each machine's one pool size, computed from the facts and the verdicts.

An article opens with its answer to its title question: a few of its claims, each with the value on every
measured machine (median, range, machines counted and named), the seed's own figure beside it and how the
verdicts fell. Its findings and its verdict table read the same records, so the page only prints what this
package wrote. Writes build/data/answers/<slug>.json (and `pool-sizes.json`); the renderer hands them to
the templates. Relies on the facts files (connlab.contract.facts_files), the claims files
(connlab.data.claims) and the Machines page's facts (its `columns` and `measured`).

write.py writes the files (write_answers, called by connlab.data.aggregate); inputs.py reads the facts the
answers read, keeping each machine's between builds (answer_facts, ANSWER_FACTS); claim_rows.py makes
each claim's row across machines and the findings; short_answers.py the headline claims (HEADLINES);
coverage.py which machines ran an article's experiments and when; pool_size.py reconciles a machine's
pool size; usl_across.py the USL fits across machines (the simulator, the normalised chart); leads.py each
machine page's lead and raw downloads; machines.py how machines are grouped and named.
"""
