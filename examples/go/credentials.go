package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// tlsFlags are the connection security settings, named as the turnstile CLI names them
// (--tls-ca, --tls-cert, --tls-key, --token and TURNSTILE_CLIENT_TLS_CA, ... in docs/security.md).
type tlsFlags struct {
	ca, cert, key, token string
}

// dialOptions turns the settings into grpc-go options: plaintext when none is set; TLS verifying the
// coordinator against ca (else the system roots); a client certificate for mTLS; a bearer token sent
// as "authorization: Bearer ..." on every call, which grpc-go refuses to send without TLS.
func dialOptions(f tlsFlags) ([]grpc.DialOption, error) {
	if f.ca == "" && f.cert == "" && f.key == "" && f.token == "" {
		return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, nil
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.ca != "" {
		pem, err := os.ReadFile(f.ca)
		if err != nil {
			return nil, fmt.Errorf("tls-ca: %w", err)
		}
		config.RootCAs = x509.NewCertPool()
		if !config.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls-ca: no PEM certificate in %s", f.ca)
		}
	}
	if (f.cert == "") != (f.key == "") {
		return nil, fmt.Errorf("tls-cert and tls-key go together: set both or neither")
	}
	if f.cert != "" {
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("tls-cert/tls-key: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	options := []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(config))}
	if f.token != "" {
		options = append(options, grpc.WithPerRPCCredentials(bearerToken(f.token)))
	}
	return options, nil
}

// bearerToken sends "authorization: Bearer <token>" with every call (streams included).
type bearerToken string

func (t bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

func (bearerToken) RequireTransportSecurity() bool { return true }
