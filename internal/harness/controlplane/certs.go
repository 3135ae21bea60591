package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// frontProxyCerts are the files the kube-apiserver needs to act as an
// aggregating front proxy: the CA that signs requestheader client
// certificates and the client certificate it presents to aggregated servers.
type frontProxyCerts struct {
	caFile, clientCertFile, clientKeyFile string
}

// frontProxyClientName is the common name the aggregated server accepts
// (--requestheader-allowed-names).
const frontProxyClientName = "front-proxy-client"

// writeFrontProxyCerts makes a fresh CA and a client certificate signed by
// it, valid for a day, into dir.
func writeFrontProxyCerts(dir string) (frontProxyCerts, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return frontProxyCerts{}, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kueue-waittime-front-proxy-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return frontProxyCerts{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return frontProxyCerts{}, err
	}
	clientKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return frontProxyCerts{}, err
	}
	clientTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: frontProxyClientName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	clientDER, err := x509.CreateCertificate(rand.Reader, clientTemplate, ca, &clientKey.PublicKey, caKey)
	if err != nil {
		return frontProxyCerts{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(clientKey)
	if err != nil {
		return frontProxyCerts{}, err
	}
	c := frontProxyCerts{
		caFile:         filepath.Join(dir, "front-proxy-ca.crt"),
		clientCertFile: filepath.Join(dir, "front-proxy-client.crt"),
		clientKeyFile:  filepath.Join(dir, "front-proxy-client.key"),
	}
	for path, block := range map[string]*pem.Block{
		c.caFile:         {Type: "CERTIFICATE", Bytes: caDER},
		c.clientCertFile: {Type: "CERTIFICATE", Bytes: clientDER},
		c.clientKeyFile:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return frontProxyCerts{}, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return c, nil
}
