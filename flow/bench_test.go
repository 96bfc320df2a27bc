package flow

import "testing"

// BenchmarkRenderValidate renders and validates a 3-master, 500-worker
// cluster with elasticity policies, per OneFlow version.
func BenchmarkRenderValidate(b *testing.B) {
	spec := DefaultSpec()
	spec.Master.Count = ptr(3)
	spec.Worker.Count = ptr(500)
	spec.Worker.Max = ptr(1000)
	spec.Worker.ElasticityPolicies = []ElasticityPolicy{
		{Type: "CHANGE", Adjust: 10, Expression: "CPU > 80 && MEMORY > 70", PeriodNumber: ptr(3), Period: ptr(60)},
	}
	for _, v := range []OneFlowVersion{Version6, Version7} {
		b.Run(v.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				doc, err := RenderService(spec, v)
				if err != nil {
					b.Fatal(err)
				}
				if ps := Validate(doc, ValidateOptions{Version: v}); HasErrors(ps) {
					b.Fatal(ps)
				}
			}
		})
	}
}
