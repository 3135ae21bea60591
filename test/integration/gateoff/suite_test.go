// Package gateoff checks what the WaitTimeEstimation gate promises when it is
// off, and that turning it on adds no API traffic: the same scenario, on
// fresh control planes, makes the same requests (cluster-scoped ones and
// watches included) from the manager and its visibility server with the
// gate off and on.
package gateoff

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

var (
	ctx context.Context
	cp  *controlplane.ControlPlane
)

func TestGateOff(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Wait Time Estimation Gate Suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	var err error
	cp, err = controlplane.Start(controlplane.Options{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
})

var _ = ginkgo.AfterSuite(func() {
	if cp != nil {
		gomega.Expect(cp.Stop()).To(gomega.Succeed())
	}
})
