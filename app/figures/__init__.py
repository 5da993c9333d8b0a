"""Plotly figures for the app: pure functions from numbers and labels to ``go.Figure``, a module
per page section, and what those figures are laid out from.

Shared by every section:
  text.py        text as plotly shows it literally (:func:`~app.figures.text.plot_text`)
  style.py       colour scales, colours and sizes
  heatmaps.py    the heatmap builders: one map, one head of a layer, every head at once
A module per section:
  tokens.py      the pieces as chips (Tokenization, the story)
  positional.py  positional encoding and embeddings
  masking.py     one head from scores to weights, with the mask
  scaled_dot_product.py  one query through one head: q, K, the scores, the softmax, V, the output
  beam_search.py the beam search's tree, candidates and re-ranking; beam_layout.py lays them out
  heads.py       the Heads lab; BertViz's line views (one head, or every head of a layer)
  explain.py     the Explain page's lenses
  training.py    training curves; training_log.py reads the log and the model card

Conventions: heatmap axes are positions 0..n-1 with the token text as tick labels, so a word that
occurs twice keeps two rows (category axes would merge them); rows are queries from top to
bottom, columns are keys; attention weights share one colour scale from 0 to 1. Every label that
came from text goes through :func:`~app.figures.text.plot_text`, because plotly reads ``<b>``,
``<s>``, ``<br>``... in labels as markup, and ``</s>`` would vanish.
"""
