"""Plotly figures for the app: pure functions from numbers and labels to ``go.Figure``.

Conventions: heatmap axes are positions 0..n-1 with the token text as tick labels, so a word that
occurs twice keeps two rows (category axes would merge them); rows are queries from top to
bottom, columns are keys; attention weights share one colour scale from 0 to 1. Every label that
came from text goes through :func:`plot_text`, because plotly reads ``<b>``, ``<s>``, ``<br>``... in
labels as markup, and ``</s>`` would vanish.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.analysis import TreeNode
from core.labelled_attention import LabelledAttention

ATTENTION_SCALE = "Blues"
DIVERGING_SCALE = "RdBu_r"
MASK_SCALE = [[0.0, "#d0d0d0"], [0.5, "#d0d0d0"], [0.5, "#2c7fb8"], [1.0, "#2c7fb8"]]
STATUS_COLOURS = {"root": "#444444", "kept": "#2c7fb8", "finished": "#31a354", "pruned": "#bbbbbb"}
KIND_COLOURS = {
    "word start": "#9ecae1",
    "continuation": "#deebf7",
    "special": "#fdae6b",
    "byte": "#fc9272",
}
MINUS_INF = "−∞"
GRID_HOVER_CELLS = 40_000  # model view cells that get token names on hover


def plot_text(text: str) -> str:
    """Text shown literally by plotly: & < > as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _labels(tokens: Sequence[str]) -> list[str]:
    return [plot_text(t) for t in tokens]


def _numbered(labels: Sequence[str] | None, n: int) -> np.ndarray:
    """'3: the' for each position (plain '3' without labels)."""
    if labels is None:
        return np.arange(n).astype(str)
    return np.array([f"{i}: {label}" for i, label in enumerate(labels)], dtype=str)


def _value_text(z: np.ndarray) -> np.ndarray:
    """Values as text, -inf as −∞."""
    return np.where(np.isneginf(z), MINUS_INF, np.char.mod("%.4f", np.nan_to_num(z, neginf=0.0)))


def _hover(
    rows: np.ndarray, columns: np.ndarray, values: np.ndarray, names: Sequence[str]
) -> np.ndarray:
    """Hover text per cell, 'query 3: the<br>key 5: cat<br>weight 0.1250', as a 2-D str array
    (plotly takes it far faster than nested lists or object arrays)."""
    add = np.char.add
    text = add(add(f"{names[0]} ", rows)[:, None], add(f"<br>{names[1]} ", columns)[None, :])
    return add(text, add(f"<br>{names[2]} ", values))


def _height(rows: int, per_row: int = 28, minimum: int = 320, maximum: int = 900) -> int:
    return int(min(max(minimum, 140 + per_row * rows), maximum))


def heatmap(
    z: np.ndarray,
    rows: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    *,
    title: str = "",
    axis_names: tuple[str, str] = ("query", "key"),
    value_name: str = "weight",
    colorscale: str | list = ATTENTION_SCALE,
    zmin: float | None = 0.0,
    zmax: float | None = 1.0,
    value_text: np.ndarray | None = None,
    show_text: bool = False,
) -> go.Figure:
    """A heatmap of z (rows x columns) on position axes.

    ``rows`` and ``columns``, when given, label the positions (tick labels and hover); without them
    an axis shows plain position numbers (long axes: dimensions, positions). -inf cells are left
    empty and marked −∞. Hover shows the row, the column and the value, or ``value_text``, which
    ``show_text`` also writes into the cells.
    """
    z = np.asarray(z, dtype=float)
    n_rows, n_cols = z.shape
    trace = go.Heatmap(
        z=np.where(np.isneginf(z), np.nan, z),
        x=np.arange(n_cols),
        y=np.arange(n_rows),
        colorscale=colorscale,
        zmin=zmin,
        zmax=zmax,
        colorbar={"title": {"text": value_name}},
        showscale=colorscale is not MASK_SCALE,  # two colours need no scale
    )
    row_labels = _labels(rows) if rows is not None else None
    col_labels = _labels(columns) if columns is not None else None
    if value_text is not None:
        value_text = np.vectorize(plot_text, otypes=[str])(np.asarray(value_text, dtype=str))
    if row_labels is None and col_labels is None and value_text is None:
        trace.hovertemplate = (
            f"{axis_names[0]} %{{y}}<br>{axis_names[1]} %{{x}}<br>{value_name} %{{z:.4f}}"
            "<extra></extra>"
        )
    else:
        trace.customdata = _hover(
            _numbered(row_labels, n_rows),
            _numbered(col_labels, n_cols),
            _value_text(z) if value_text is None else value_text,
            (*axis_names, value_name),
        )
        trace.hovertemplate = "%{customdata}<extra></extra>"
    if show_text and value_text is not None:
        trace.update(text=value_text, texttemplate="%{text}", textfont={"size": 13})
    elif np.isneginf(z).any():
        trace.update(text=np.where(np.isneginf(z), MINUS_INF, ""), texttemplate="%{text}")
    fig = go.Figure(trace)
    fig.update_layout(
        title=plot_text(title),
        height=_height(n_rows),
        plot_bgcolor="#f3f3f3",
        xaxis={"title": axis_names[1], "side": "top"},
        yaxis={"title": axis_names[0], "autorange": "reversed"},
        margin={"t": 110},
    )
    if col_labels is not None:
        fig.update_xaxes(tickvals=list(range(n_cols)), ticktext=col_labels, tickangle=-60)
    if row_labels is not None:
        fig.update_yaxes(tickvals=list(range(n_rows)), ticktext=row_labels)
    return fig


def attention_map(
    attention: LabelledAttention, layer: int, head: int | None = None, title: str = ""
) -> go.Figure:
    """One layer of a LabelledAttention (layer and head count from 0): one head, or with
    head=None the average of the heads; rows and columns carry core's labels."""
    weights = attention.weights[layer]  # (H, Q, K)
    z = weights.mean(axis=0) if head is None else weights[head]
    return heatmap(z, attention.query_labels, attention.key_labels, title=title)


def attention_grid(attention: LabelledAttention) -> go.Figure:
    """The model view: weights (L, H, q, k) as one mosaic of small maps, a row of tiles per layer
    and a column per head, one cell apart, on one 0..1 colour scale. (One heatmap, not L x H
    subplots: far faster to build and draw.) Hover names the layer, head and tokens, up to
    GRID_HOVER_CELLS cells; beyond that (long sentences) only the weight, to keep the page light.
    """
    weights, queries, keys = attention.weights, attention.query_labels, attention.key_labels
    layers, heads, q, k = weights.shape
    z = np.full((layers * (q + 1) - 1, heads * (k + 1) - 1), np.nan)
    tiles = [
        (
            layer,
            head,
            np.s_[layer * (q + 1) : layer * (q + 1) + q, head * (k + 1) : head * (k + 1) + k],
        )
        for layer in range(layers)
        for head in range(heads)
    ]
    for layer, head, tile in tiles:
        z[tile] = weights[layer, head]
    trace = go.Heatmap(
        z=z,
        colorscale=ATTENTION_SCALE,
        zmin=0.0,
        zmax=1.0,
        hoverongaps=False,
        colorbar={"title": {"text": "weight"}},
        hovertemplate="weight %{z:.4f}<extra></extra>",
    )
    if weights.size <= GRID_HOVER_CELLS:
        pairs = np.char.add(
            np.char.add(_numbered(_labels(queries), q)[:, None], " → "),
            _numbered(_labels(keys), k)[None, :],
        )
        hover = np.full(z.shape, "", dtype=object)
        for layer, head, tile in tiles:
            hover[tile] = np.char.add(f"L{layer + 1} H{head + 1} · ", pairs)
        trace.update(
            customdata=hover.astype(str),
            hovertemplate="%{customdata}<br>weight %{z:.4f}<extra></extra>",
        )
    fig = go.Figure(trace)
    fig.update_xaxes(
        tickvals=[h * (k + 1) + (k - 1) / 2 for h in range(heads)],
        ticktext=[f"head {h + 1}" for h in range(heads)],
        side="top",
        showgrid=False,
        zeroline=False,
    )
    fig.update_yaxes(
        tickvals=[layer * (q + 1) + (q - 1) / 2 for layer in range(layers)],
        ticktext=[f"layer {layer + 1}" for layer in range(layers)],
        autorange="reversed",
        scaleanchor="x",
        showgrid=False,
        zeroline=False,
    )
    fig.update_layout(
        height=int(min(max(300, 80 + 900 * z.shape[0] / z.shape[1]), 1400)),
        plot_bgcolor="rgba(0,0,0,0)",
        margin={"t": 40, "l": 20, "r": 20, "b": 20},
    )
    return fig


def token_chips(
    pieces: Sequence[str], ids: Sequence[int], kinds: Sequence[str], per_row: int = 12
) -> go.Figure:
    """Pieces as chips, ``per_row`` to a line: the piece above its id, coloured by kind."""
    n = len(pieces)
    lines = max(1, -(-n // per_row))
    codes = list(KIND_COLOURS)
    z = np.full((lines, per_row), np.nan)
    text = np.full((lines, per_row), "", dtype=object)
    hover = np.full((lines, per_row), "", dtype=object)
    for i, (piece, token_id, kind) in enumerate(zip(pieces, ids, kinds)):
        r, c = divmod(i, per_row)
        z[r, c] = codes.index(kind)
        text[r, c] = f"{plot_text(piece)}<br><sub>{token_id}</sub>"
        hover[r, c] = f"{i}: {plot_text(piece)}<br>id {token_id}, {kind}"
    scale = []
    for k, colour in enumerate(KIND_COLOURS.values()):
        scale += [[k / len(codes), colour], [(k + 1) / len(codes), colour]]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            text=text.astype(str),
            texttemplate="%{text}",
            textfont={"size": 15},
            customdata=hover.astype(str),
            hovertemplate="%{customdata}<extra></extra>",
            hoverongaps=False,
            colorscale=scale,
            zmin=-0.5,
            zmax=len(codes) - 0.5,
            showscale=False,
            xgap=4,
            ygap=4,
        )
    )
    for kind, colour in KIND_COLOURS.items():  # legend entries for the kinds
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=kind,
                marker={"color": colour, "size": 12, "symbol": "square"},
            )
        )
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, autorange="reversed")
    fig.update_layout(
        height=90 + 56 * lines,
        margin={"t": 30, "b": 10, "l": 10, "r": 10},
        plot_bgcolor="rgba(0,0,0,0)",
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    return fig


# --------------------------------------------------------------------------------------------------
# Positional encoding and embeddings
# --------------------------------------------------------------------------------------------------


def positional_heatmap(
    pe: np.ndarray, rows: Sequence[str] | None = None, title: str = ""
) -> go.Figure:
    """PE (positions x dimensions) on a diverging scale from -1 to 1; rows labelled with tokens
    when given, else with position numbers."""
    return heatmap(
        pe,
        rows,
        title=title,
        axis_names=("position", "dimension"),
        value_name="PE",
        colorscale=DIVERGING_SCALE,
        zmin=-1.0,
        zmax=1.0,
    )


def positional_curves(pe: np.ndarray, dims: Sequence[int]) -> go.Figure:
    """Chosen dimensions of PE against position: sines (even d) and cosines (odd d)."""
    fig = go.Figure()
    d_model = pe.shape[1]
    for d in dims:
        i = d // 2
        kind = "sin" if d % 2 == 0 else "cos"
        fig.add_trace(
            go.Scatter(
                x=np.arange(len(pe)),
                y=pe[:, d],
                mode="lines",
                name=f"dim {d}: {kind}(pos / 10000^({2 * i}/{d_model}))",
            )
        )
    fig.update_layout(
        xaxis_title="position",
        yaxis_title="PE",
        height=380,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def positional_similarity(pe: np.ndarray) -> go.Figure:
    """PE · PE^T: how alike the encodings of two positions are (it depends on their distance)."""
    return heatmap(
        pe @ pe.T,
        axis_names=("position", "position"),
        value_name="dot product",
        colorscale="Viridis",
        zmin=None,
        zmax=None,
    )


def embedding_sum(token: np.ndarray, position: np.ndarray, tokens: Sequence[str]) -> go.Figure:
    """The encoder input, side by side: token embedding x sqrt(d_model), PE, and their sum
    (tokens x dimensions, one diverging scale)."""
    parts = [
        ("token embedding × √d_model", token),
        ("+ positional encoding", position),
        ("= encoder input", token + position),
    ]
    limit = float(max(np.abs(p).max() for _, p in parts)) or 1.0
    fig = make_subplots(
        rows=1,
        cols=3,
        shared_yaxes=True,
        subplot_titles=[name for name, _ in parts],
        horizontal_spacing=0.02,
    )
    labels = _labels(tokens)
    for col, (name, values) in enumerate(parts, start=1):
        fig.add_trace(
            go.Heatmap(
                z=values,
                coloraxis="coloraxis",
                hovertemplate=(
                    f"{name}<br>position %{{y}}<br>dimension %{{x}}<br>value %{{z:.4f}}"
                    "<extra></extra>"
                ),
            ),
            row=1,
            col=col,
        )
    fig.update_yaxes(
        autorange="reversed", tickvals=list(range(len(labels))), ticktext=labels, row=1, col=1
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title="dimension")
    fig.update_layout(
        coloraxis={"colorscale": DIVERGING_SCALE, "cmin": -limit, "cmax": limit},
        height=_height(len(tokens)),
    )
    return fig


# --------------------------------------------------------------------------------------------------
# Beam search
# --------------------------------------------------------------------------------------------------


def beam_tree(nodes: Sequence[TreeNode], chosen: Sequence[int], current_step: int) -> go.Figure:
    """The search tree from :func:`app.analysis.beam_tree`: depth left to right, one colour per
    status, the chosen output's path drawn thick, the current step's column shaded."""
    by_prefix = {n.prefix: n for n in nodes}
    chosen = tuple(chosen)
    fig = go.Figure()
    fig.add_vrect(
        x0=current_step + 0.5,
        x1=current_step + 1.5,
        fillcolor="#fff3bf",
        opacity=0.6,
        line_width=0,
        layer="below",
    )
    for on_path in (False, True):
        xs, ys = [], []
        for node in nodes:
            if node.prefix and (chosen[: len(node.prefix)] == node.prefix) == on_path:
                parent = by_prefix[node.parent]
                xs += [parent.step + 1, node.step + 1, None]
                ys += [parent.y, node.y, None]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": "#31a354" if on_path else "#999999", "width": 4 if on_path else 1.2},
                hoverinfo="skip",
                name="chosen output" if on_path else "search",
                showlegend=on_path,
            )
        )
    for status, colour in STATUS_COLOURS.items():
        group = [n for n in nodes if n.status == status]
        if not group:
            continue
        fig.add_trace(
            go.Scatter(
                x=[n.step + 1 for n in group],
                y=[n.y for n in group],
                mode="markers+text",
                text=[plot_text(n.piece) for n in group],
                textposition="middle right",
                marker={"color": colour, "size": 11, "line": {"color": "white", "width": 1}},
                name=status,
                customdata=[
                    [
                        plot_text(n.piece),
                        n.log_prob,
                        np.exp(n.log_prob),
                        n.score,
                        n.normalized,
                        plot_text(n.reason),
                    ]
                    for n in group
                ],
                hovertemplate=(
                    "<b>%{customdata[0]}</b><br>log P(token) %{customdata[1]:.3f}"
                    " (P %{customdata[2]:.3f})<br>cumulative %{customdata[3]:.3f}"
                    "<br>normalised %{customdata[4]:.3f}<br>%{customdata[5]}<extra></extra>"
                ),
            )
        )
    depth = max(n.step for n in nodes) + 2
    leaves = max(n.y for n in nodes) + 1
    fig.update_xaxes(title="step", range=[-0.5, depth + 0.8], dtick=1)
    fig.update_yaxes(visible=False, autorange="reversed")
    fig.update_layout(
        height=_height(int(leaves), per_row=24, maximum=1400),
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
        plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig


def candidate_bars(rows: Sequence[dict]) -> go.Figure:
    """Each candidate's probability given its beam, coloured by what the search decided."""
    fig = go.Figure()
    labels = [plot_text(f"beam {r['beam']}: {r['next piece']}") for r in rows]
    for status, colour in STATUS_COLOURS.items():
        index = [i for i, r in enumerate(rows) if r["status"] == status]
        if index:
            fig.add_trace(
                go.Bar(
                    x=[rows[i]["probability"] for i in index],
                    y=index,
                    orientation="h",
                    marker_color=colour,
                    name=status,
                    customdata=[[labels[i], plot_text(rows[i]["why"])] for i in index],
                    hovertemplate=(
                        "%{customdata[0]}<br>P %{x:.3f}<br>%{customdata[1]}<extra></extra>"
                    ),
                )
            )
    fig.update_yaxes(tickvals=list(range(len(rows))), ticktext=labels, autorange="reversed")
    fig.update_xaxes(title="probability given the beam's prefix", range=[0, 1])
    fig.update_layout(
        height=_height(len(rows), per_row=20, maximum=1200),
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    return fig


def rerank_lines(
    labels: Sequence[str], curves: Sequence[np.ndarray], alphas: np.ndarray, alpha: float
) -> go.Figure:
    """Normalised score log P / lp(alpha) of each finished hypothesis as alpha varies; the highest
    line at the current alpha (dashed) wins."""
    fig = go.Figure()
    for label, values in zip(labels, curves):
        fig.add_trace(go.Scatter(x=alphas, y=values, mode="lines", name=plot_text(label)))
    fig.add_vline(x=alpha, line_dash="dash", line_color="#444444")
    fig.update_layout(
        xaxis_title="length penalty α",
        yaxis_title="log P / lp",
        height=380,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


# --------------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------------


def training_curves(
    panels: dict[str, dict[str, tuple[Sequence[float], Sequence[float]]]],
    mark_step: int | None = None,
    log_steps: bool = False,
) -> go.Figure:
    """One subplot per panel title, one line per named (steps, values) series; a dotted line at
    ``mark_step``; a logarithmic step axis for log-spaced snapshots."""
    titles = list(panels)
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.07)
    for col, title in enumerate(titles, start=1):
        for name, (steps, values) in panels[title].items():
            fig.add_trace(
                go.Scatter(
                    x=steps,
                    y=values,
                    mode="lines+markers" if len(steps) < 30 else "lines",
                    name=name,
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(title="step", type="log" if log_steps else None, row=1, col=col)
    if mark_step is not None:
        fig.add_vline(x=mark_step, line_dash="dot", line_color="grey")
    fig.update_layout(height=380, legend={"orientation": "h", "y": -0.3})
    return fig


# --------------------------------------------------------------------------------------------------
# Explain
# --------------------------------------------------------------------------------------------------


def lens_map(values: dict[str, np.ndarray], source_labels: Sequence[str], title: str) -> go.Figure:
    """A row per lens over the source pieces, each row on its own scale: divided by its largest
    absolute value, so -1..1 (negative: evidence against the word). Hover gives the raw value."""
    raw = np.stack(list(values.values()))  # (M, S)
    scale = np.abs(raw).max(axis=1, keepdims=True)
    scaled = raw / np.where(scale > 0, scale, 1.0)
    fig = heatmap(
        scaled,
        list(values),
        source_labels,
        title=title,
        axis_names=("lens", "source piece"),
        value_name="share of the row's largest",
        colorscale=DIVERGING_SCALE,
        zmin=-1.0,
        zmax=1.0,
        value_text=np.vectorize(lambda v: f"{v:.3g}")(raw),
    )
    fig.update_layout(height=_height(len(values), per_row=44), margin={"l": 260})
    return fig


def agreement_map(names: Sequence[str], agreement: np.ndarray) -> go.Figure:
    """Kendall's tau between every pair of lenses, -1..1, with the value in each cell."""
    return heatmap(
        agreement,
        names,
        names,
        title="Do the lenses rank the source pieces alike? (Kendall's tau)",
        axis_names=("lens", "lens"),
        value_name="tau",
        colorscale=DIVERGING_SCALE,
        zmin=-1.0,
        zmax=1.0,
        value_text=np.vectorize(lambda v: f"{v:.2f}")(agreement),
        show_text=True,
    )


# --------------------------------------------------------------------------------------------------
# Heads lab
# --------------------------------------------------------------------------------------------------


def head_dashboard(values: np.ndarray, roles: Sequence[str], title: str, name: str) -> go.Figure:
    """A layers x heads grid coloured by one statistic (values (L, H)), each cell naming the
    head's role (roles: L * H labels, layer by layer)."""
    layers, heads = values.shape
    fig = heatmap(
        values,
        [f"L{layer}" for layer in range(1, layers + 1)],
        [f"H{head}" for head in range(1, heads + 1)],
        title=title,
        axis_names=("layer", "head"),
        value_name=name,
        colorscale="Viridis",
        zmin=None,
        zmax=None,
        value_text=np.array(
            [f"{role}<br>{value:.2f}" for role, value in zip(roles, values.ravel())]
        ).reshape(values.shape),
        show_text=True,
    )
    fig.update_xaxes(tickangle=0)
    fig.update_traces(textfont={"size": 10})
    return fig


def focus_bars(labels: Sequence[str], weights: Sequence[float], title: str) -> go.Figure:
    """The heads ranked for one word: a bar per head, the strongest on top."""
    fig = go.Figure(
        go.Bar(
            x=list(weights),
            y=[plot_text(label) for label in labels],
            orientation="h",
            marker_color=STATUS_COLOURS["kept"],
            hovertemplate="%{y}<br>weight %{x:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=plot_text(title),
        height=_height(len(labels), per_row=30, minimum=260),
        xaxis={"title": "weight on the top key", "range": [0, 1]},
        yaxis={"autorange": "reversed"},
        margin={"l": 260},
    )
    return fig
