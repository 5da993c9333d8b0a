"""Narrow screens and narrow charts: a phone (390 px wide), a chart in one of two columns.

Streamlit does not tell the server the size of the window, so what adapts is CSS, on every page:
the options of a page's picker wrap onto more lines instead of scrolling sideways out of view
(and a long option onto two lines instead of ending in "…"), and a chart narrower than
NARROW_CHART draws its title and caption smaller, so that their lines (app/slides.py wraps them
at TITLE_CHARS and CAPTION_CHARS) are not cut at its right edge. An exported figure is drawn
outside the page, at its own sizes.
"""

NARROW_CHART = "480px"
CSS = f"""<style>
[data-testid="stMain"] [role="radiogroup"] {{ flex-wrap: wrap; }}
[data-testid="stMain"] [role="radiogroup"] button :is(div, span, p) {{
    white-space: normal; height: auto;
}}
[data-testid="stMain"] [role="radiogroup"] button {{ height: auto; }}
[data-testid="stPlotlyChart"] {{ container-type: inline-size; }}
@container (max-width: {NARROW_CHART}) {{
    .js-plotly-plot .gtitle {{ font-size: 12px !important; }}
    .js-plotly-plot .gtitle-subtitle {{ font-size: 10px !important; }}
}}
</style>"""
