import pngjs from "pngjs";
import { GLYPH, glyphRows } from "./bitmap-font.js";

/** An RGB color as three 0–255 components. */
export type Rgb = readonly [number, number, number];

/**
 * A white RGBA raster with the few primitives the plots need — rectangles, thick lines and bitmap
 * text — encoded to PNG with pngjs (pure JavaScript, no install scripts).
 */
export class PngCanvas {
  readonly #png: pngjs.PNG;

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.#png = new pngjs.PNG({ width, height });
    this.#png.data.fill(255);
  }

  /** Sets one pixel; coordinates outside the canvas are ignored. */
  pixel(x: number, y: number, color: Rgb): void {
    const px = Math.round(x);
    const py = Math.round(y);
    if (px < 0 || py < 0 || px >= this.width || py >= this.height) return;
    const i = (py * this.width + px) * 4;
    this.#png.data[i] = color[0];
    this.#png.data[i + 1] = color[1];
    this.#png.data[i + 2] = color[2];
    this.#png.data[i + 3] = 255;
  }

  /** Fills the rectangle with top-left corner (x, y). */
  rect(x: number, y: number, w: number, h: number, color: Rgb): void {
    for (let dy = 0; dy < h; dy++) for (let dx = 0; dx < w; dx++) this.pixel(x + dx, y + dy, color);
  }

  /** Draws a line of the given thickness in pixels. */
  line(x0: number, y0: number, x1: number, y1: number, color: Rgb, thickness = 1): void {
    const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    const r = Math.floor(thickness / 2);
    for (let s = 0; s <= steps; s++) {
      const x = x0 + ((x1 - x0) * s) / steps;
      const y = y0 + ((y1 - y0) * s) / steps;
      if (thickness <= 1) this.pixel(x, y, color);
      else this.rect(Math.round(x) - r, Math.round(y) - r, thickness, thickness, color);
    }
  }

  /** Width in pixels of `text` drawn at `scale`. */
  textWidth(text: string, scale = 2): number {
    return [...text].length * GLYPH.advance * scale - scale;
  }

  /** Draws `text` with its top-left corner at (x, y); `align` anchors x at the start, middle or end. */
  text(x: number, y: number, text: string, color: Rgb, scale = 2, align: "start" | "middle" | "end" = "start"): void {
    const width = this.textWidth(text, scale);
    let cx = align === "start" ? x : align === "middle" ? x - width / 2 : x - width;
    cx = Math.round(cx);
    for (const ch of text) {
      const rows = glyphRows(ch);
      for (let row = 0; row < GLYPH.height; row++) {
        for (let col = 0; col < GLYPH.width; col++) {
          if (rows[row] & (1 << (GLYPH.width - 1 - col)))
            this.rect(cx + col * scale, y + row * scale, scale, scale, color);
        }
      }
      cx += GLYPH.advance * scale;
    }
  }

  /** Encodes the canvas as PNG. */
  toPng(): Buffer {
    return pngjs.PNG.sync.write(this.#png);
  }
}
