package eval

import (
	"fmt"
	"image/color"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WritePlots draws two PNGs into dir: <name>-levels.png, the mean wait by
// observed utilization as observed and as predicted by the paper's formula,
// Whitt's approximation and the forecast; and <name>-forecast.png, each
// forecasted workload's predicted against its actual wait, with the
// diagonal, beside the EMA baseline's predictions.
func (r *Report) WritePlots(dir string) error {
	if err := r.levelsPlot(filepath.Join(dir, r.Scenario.Name+"-levels.png")); err != nil {
		return err
	}
	return r.forecastPlot(filepath.Join(dir, r.Scenario.Name+"-forecast.png"))
}

func (r *Report) levelsPlot(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: mean wait by utilization (k_eff = %d)", r.Scenario.Name, r.KEff)
	p.X.Label.Text = "observed utilization ρ"
	p.Y.Label.Text = "mean wait (s)"
	p.Legend.Top = true
	p.Legend.Left = true
	series := []struct {
		name  string
		value func(LevelResult) *float64
		color color.Color
		dash  []vg.Length
	}{
		{"observed (all workloads)", func(l LevelResult) *float64 { return ptr(l.ObservedMeanWait) }, color.Black, nil},
		{"paper Approximation 1 (target ρ)", func(l LevelResult) *float64 { return l.PaperMeanWait }, color.RGBA{R: 200, A: 255}, []vg.Length{vg.Points(4), vg.Points(2)}},
		{"Whitt GI/G/k (target ρ)", func(l LevelResult) *float64 { return l.WhittMeanWait }, color.RGBA{G: 140, A: 255}, []vg.Length{vg.Points(1), vg.Points(2)}},
		{"forecast (mean over forecasted)", func(l LevelResult) *float64 { return l.ForecastMeanWait }, color.RGBA{B: 220, A: 255}, nil},
		{"observed (forecasted workloads)", func(l LevelResult) *float64 { return l.ForecastedMeanWait }, color.RGBA{R: 120, G: 120, B: 120, A: 255}, []vg.Length{vg.Points(2), vg.Points(2)}},
	}
	for _, s := range series {
		var pts plotter.XYs
		for _, l := range r.Levels {
			if v := s.value(l); v != nil {
				pts = append(pts, plotter.XY{X: l.ObservedUtilization, Y: *v})
			}
		}
		if len(pts) == 0 {
			continue
		}
		// Observed utilizations need not grow with the targets.
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, points.Color = s.color, s.color
		line.Dashes = s.dash
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func (r *Report) forecastPlot(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: predicted vs actual wait per workload", r.Scenario.Name)
	p.X.Label.Text = "actual wait (s)"
	p.Y.Label.Text = "predicted wait (s)"
	p.Legend.Top = true
	p.Legend.Left = true
	var forecast, ema plotter.XYs
	maxV := 1.0
	for _, w := range r.Workloads {
		if w.Unfeasible || w.Forecast == nil {
			continue
		}
		forecast = append(forecast, plotter.XY{X: w.Wait, Y: *w.Forecast})
		ema = append(ema, plotter.XY{X: w.Wait, Y: w.EMA})
		maxV = max(maxV, w.Wait, *w.Forecast, w.EMA)
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: maxV, Y: maxV}})
	if err != nil {
		return err
	}
	diag.Color = color.Gray{Y: 150}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(diag)
	for _, s := range []struct {
		name  string
		pts   plotter.XYs
		color color.Color
		shape draw.GlyphDrawer
	}{
		{"forecast (visibility API)", forecast, color.RGBA{B: 220, A: 255}, draw.CircleGlyph{}},
		{"EMA baseline (α = 0.3)", ema, color.RGBA{R: 200, G: 120, A: 255}, draw.CrossGlyph{}},
	} {
		if len(s.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.pts)
		if err != nil {
			return err
		}
		sc.Color = s.color
		sc.Shape = s.shape
		p.Add(sc)
		p.Legend.Add(s.name, sc)
	}
	return p.Save(6*vg.Inch, 6*vg.Inch, path)
}
