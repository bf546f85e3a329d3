package io.affinityrouter.examples.simulator.report;

import java.util.List;
import java.util.Locale;

/**
 * Inline SVG charts with no dependency: horizontal bars and line series on linear or logarithmic
 * axes. Stateless and thread-safe.
 */
public final class SvgChart {
  /** Distinct colours for series (Tableau 10 and a few more). */
  static final String[] PALETTE = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#8c564b", "#17becf",
      "#bcbd22"};

  /** One line: a name and its points. */
  public record Series(String name, double[] x, double[] y) {}

  private SvgChart() {}

  /** Horizontal bars, one per label, with an optional dashed reference value (NaN for none). */
  static String bars(String title, List<String> labels, double[] values, double max,
      String unit, double reference, String referenceLabel) {
    int rowH = 20;
    int left = 190;
    int width = 640;
    int plot = width - left - 70;
    int height = 30 + rowH * labels.size() + 10;
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
        "<svg width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
            + "font-family=\"sans-serif\" font-size=\"12\">", width, height));
    b.append(text(4, 16, title, "bold"));
    for (int i = 0; i < labels.size(); i++) {
      int y = 28 + i * rowH;
      double w = max <= 0 ? 0 : plot * Math.min(1, values[i] / max);
      b.append(text(4, y + 13, escape(labels.get(i)), "normal"));
      b.append(String.format(Locale.ROOT,
          "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", left, y,
          w, rowH - 5, PALETTE[i % PALETTE.length]));
      b.append(text(left + (int) w + 4, y + 13,
          String.format(Locale.ROOT, "%.1f%s", values[i], unit), "normal"));
    }
    if (!Double.isNaN(reference) && max > 0) {
      double x = left + plot * Math.min(1, reference / max);
      b.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"22\" x2=\"%.1f\" y2=\"%d\" "
          + "stroke=\"#333\" stroke-dasharray=\"4 3\"/>", x, x, height - 6));
      b.append(text((int) x + 3, height - 2, escape(referenceLabel), "normal"));
    }
    return b.append("</svg>").toString();
  }

  /**
   * Line series. {@code logX} draws x on a base-10 log scale (values must be positive).
   */
  public static String lines(String title, String xLabel, String yLabel, List<Series> series,
      boolean logX, double yMax, int width, int height, boolean legend) {
    int left = 50;
    int right = legend ? 180 : 10;
    int top = 24;
    int bottom = 34;
    int pw = width - left - right;
    int ph = height - top - bottom;
    double xMin = Double.POSITIVE_INFINITY;
    double xMax = Double.NEGATIVE_INFINITY;
    double yTop = yMax;
    for (Series s : series) {
      for (int i = 0; i < s.x().length; i++) {
        xMin = Math.min(xMin, fx(s.x()[i], logX));
        xMax = Math.max(xMax, fx(s.x()[i], logX));
        if (Double.isNaN(yMax)) {
          yTop = Double.isNaN(yTop) ? s.y()[i] : Math.max(yTop, s.y()[i]);
        }
      }
    }
    if (!(xMax > xMin)) {
      xMax = xMin + 1;
    }
    if (!(yTop > 0)) {
      yTop = 1;
    }
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
        "<svg width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
            + "font-family=\"sans-serif\" font-size=\"11\">", width, height));
    b.append(text(4, 14, escape(title), "bold"));
    b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
        + "fill=\"none\" stroke=\"#999\"/>", left, top, pw, ph));
    for (int t = 0; t <= 4; t++) {
      double xv = xMin + (xMax - xMin) * t / 4;
      double shown = logX ? Math.pow(10, xv) : xv;
      b.append(text(left + pw * t / 4 - 12, top + ph + 14, number(shown), "normal"));
      b.append(text(2, top + ph - ph * t / 4 + 4, number(yTop * t / 4), "normal"));
    }
    b.append(text(left + pw / 2 - 30, height - 4, escape(xLabel), "normal"));
    b.append(text(left + 4, top + 12, escape(yLabel), "normal"));
    for (int k = 0; k < series.size(); k++) {
      Series s = series.get(k);
      StringBuilder pts = new StringBuilder();
      for (int i = 0; i < s.x().length; i++) {
        double px = left + pw * (fx(s.x()[i], logX) - xMin) / (xMax - xMin);
        double py = top + ph - ph * Math.min(1, Math.max(0, s.y()[i] / yTop));
        pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
      }
      String colour = PALETTE[k % PALETTE.length];
      b.append("<polyline fill=\"none\" stroke=\"").append(colour)
          .append("\" stroke-width=\"1.5\" points=\"").append(pts).append("\"/>");
      if (legend) {
        int ly = top + 10 + k * 14;
        b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"3\" "
            + "fill=\"%s\"/>", left + pw + 8, ly - 4, colour));
        b.append(text(left + pw + 22, ly, escape(s.name()), "normal"));
      }
    }
    return b.append("</svg>").toString();
  }

  private static double fx(double x, boolean log) {
    return log ? Math.log10(Math.max(x, 1e-9)) : x;
  }

  private static String number(double v) {
    if (v >= 10_000) {
      return String.format(Locale.ROOT, "%.0fk", v / 1000);
    }
    return v >= 10 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2f", v);
  }

  private static String text(int x, int y, String s, String weight) {
    return "<text x=\"" + x + "\" y=\"" + y + "\" font-weight=\"" + weight + "\">" + s + "</text>";
  }

  /** Escapes text for HTML and SVG. */
  public static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace("\"", "&quot;");
  }
}
