package report

import (
	"fmt"
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
)

// WritePlots draws three PNGs into dir:
//   - <name>-levels.png: each predictor's MAE by level, with its 95%
//     interval, on the same scored workloads;
//   - <name>-forecast.png: each scored workload's predicted against its
//     actual remaining wait, for the forecast and the EMA baseline;
//   - <name>-reliability.png: the forecast's nominal against realized
//     quantile coverage (P50, P90) per level, with 95% intervals.
func (r *Report) WritePlots(dir string) error {
	for suffix, draw := range map[string]func(string) error{
		"-levels.png":      r.levelsPlot,
		"-forecast.png":    r.forecastPlot,
		"-reliability.png": r.reliabilityPlot,
	} {
		if err := draw(filepath.Join(dir, r.Spec.Name+suffix)); err != nil {
			return fmt.Errorf("%s%s: %w", r.Spec.Name, suffix, err)
		}
	}
	return nil
}

var predictorStyles = map[estimator.Predictor]struct {
	name  string
	color color.Color
	shape draw.GlyphDrawer
}{
	estimator.PredictorForecast: {"forecast", color.RGBA{B: 220, A: 255}, draw.CircleGlyph{}},
	estimator.PredictorEMA:      {"EMA baseline", color.RGBA{R: 200, G: 120, A: 255}, draw.CrossGlyph{}},
	estimator.PredictorPaper:    {"paper Erlang-C (measured)", color.RGBA{R: 200, A: 255}, draw.SquareGlyph{}},
	estimator.PredictorWhitt:    {"Whitt GI/G/k (measured)", color.RGBA{G: 140, A: 255}, draw.TriangleGlyph{}},
}

// errorPoints are points with asymmetric vertical error bars.
type errorPoints struct {
	plotter.XYs
	plotter.YErrors
}

func (r *Report) levelsPlot(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: MAE of the remaining wait by level (95%% intervals)", r.Spec.Name)
	p.X.Label.Text = "level (target utilization)"
	p.Y.Label.Text = "mean absolute error (s)"
	p.Legend.Top = true
	p.Legend.Left = true
	for i, pred := range estimator.Predictors {
		var pts errorPoints
		// Predictors side by side within a level.
		offset := (float64(i) - 1.5) * 0.006
		for _, l := range r.Levels {
			pr, ok := l.Predictors[string(pred)]
			if !ok {
				continue
			}
			pts.XYs = append(pts.XYs, plotter.XY{X: l.TargetUtilization + offset, Y: pr.MAE})
			lo, hi := 0.0, 0.0
			if pr.MAECI95 != nil {
				lo, hi = pr.MAE-pr.MAECI95[0], pr.MAECI95[1]-pr.MAE
			}
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{lo, hi})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		style := predictorStyles[pred]
		line, points, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return err
		}
		line.Color, points.Color, points.Shape = style.color, style.color, style.shape
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return err
		}
		bars.Color = style.color
		p.Add(line, points, bars)
		p.Legend.Add(style.name, line, points)
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func (r *Report) forecastPlot(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: predicted vs actual remaining wait per scored workload", r.Spec.Name)
	p.X.Label.Text = "actual remaining wait (s)"
	p.Y.Label.Text = "predicted remaining wait (s)"
	p.Legend.Top = true
	p.Legend.Left = true
	maxV := 1.0
	series := map[estimator.Predictor]plotter.XYs{}
	for _, s := range r.Samples {
		actual := s.Score.Actual.Seconds()
		for _, pred := range []estimator.Predictor{estimator.PredictorForecast, estimator.PredictorEMA} {
			if v := s.Score.Prediction(pred); v.OK {
				series[pred] = append(series[pred], plotter.XY{X: actual, Y: v.Wait.Seconds()})
				maxV = max(maxV, actual, v.Wait.Seconds())
			}
		}
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: maxV, Y: maxV}})
	if err != nil {
		return err
	}
	diag.Color = color.Gray{Y: 150}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(diag)
	for _, pred := range []estimator.Predictor{estimator.PredictorEMA, estimator.PredictorForecast} {
		if len(series[pred]) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(series[pred])
		if err != nil {
			return err
		}
		style := predictorStyles[pred]
		sc.Color, sc.Shape = style.color, style.shape
		p.Add(sc)
		p.Legend.Add(style.name, sc)
	}
	return p.Save(6*vg.Inch, 6*vg.Inch, path)
}

func (r *Report) reliabilityPlot(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: forecast quantile reliability (95%% intervals)", r.Spec.Name)
	p.X.Label.Text = "nominal quantile"
	p.Y.Label.Text = "realized coverage"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.Legend.Top = true
	p.Legend.Left = true
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return err
	}
	diag.Color = color.Gray{Y: 150}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(diag)
	for i, l := range r.Levels {
		var pts errorPoints
		offset := (float64(i) - float64(len(r.Levels)-1)/2) * 0.01
		for _, q := range []struct {
			nominal float64
			value   *float64
			ci      *[2]float64
		}{{0.5, l.P50Coverage, l.P50CoverageCI95}, {0.9, l.P90Coverage, l.P90CoverageCI95}} {
			if q.value == nil {
				continue
			}
			pts.XYs = append(pts.XYs, plotter.XY{X: q.nominal + offset, Y: *q.value})
			lo, hi := 0.0, 0.0
			if q.ci != nil {
				lo, hi = max(*q.value-q.ci[0], 0), max(q.ci[1]-*q.value, 0)
			}
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{lo, hi})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		c := plotutilColor(i)
		sc, err := plotter.NewScatter(pts.XYs)
		if err != nil {
			return err
		}
		sc.Color, sc.Shape = c, draw.CircleGlyph{}
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return err
		}
		bars.Color = c
		p.Add(sc, bars)
		p.Legend.Add(fmt.Sprintf("level %.2f", l.TargetUtilization), sc)
	}
	return p.Save(5*vg.Inch, 5*vg.Inch, path)
}

// plotutilColor is the i-th of a few distinguishable colors.
func plotutilColor(i int) color.Color {
	palette := []color.Color{
		color.RGBA{B: 220, A: 255}, color.RGBA{R: 200, A: 255}, color.RGBA{G: 140, A: 255},
		color.RGBA{R: 200, G: 120, A: 255}, color.RGBA{R: 120, B: 160, A: 255}, color.RGBA{G: 120, B: 120, A: 255},
	}
	return palette[i%len(palette)]
}
