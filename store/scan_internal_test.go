package store

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm/schema"

	"holdco/models"
)

// AuthorizeConglomerateCredits scans the conglomerate's row with
// database/sql: its column list is every column of the model, each
// bound to the model's own field.
func TestConglomerateColumnsAreTheModels(t *testing.T) {
	sch, err := schema.Parse(&models.Conglomerate{}, &sync.Map{}, schema.NamingStrategy{})
	require.NoError(t, err)
	var modelColumns []string
	for _, f := range sch.Fields {
		if f.DBName != "" {
			modelColumns = append(modelColumns, f.DBName)
		}
	}
	assert.ElementsMatch(t, modelColumns, conglomerateColumns)

	var c models.Conglomerate
	dest := conglomerateDest(&c)
	require.Len(t, dest, len(conglomerateColumns))
	for i, name := range conglomerateColumns {
		f := sch.LookUpField(name)
		require.NotNil(t, f, name)
		field := f.ReflectValueOf(context.Background(), reflect.ValueOf(&c).Elem())
		assert.Same(t, field.Addr().Interface(), dest[i], "destination %d is the field of %s", i, name)
	}
}

// getCompany scans the company's row with database/sql: its column list
// is every column of the model, each bound to the model's own field.
func TestCompanyColumnsAreTheModels(t *testing.T) {
	sch, err := schema.Parse(&models.Company{}, &sync.Map{}, schema.NamingStrategy{})
	require.NoError(t, err)
	var modelColumns []string
	for _, f := range sch.Fields {
		if f.DBName != "" {
			modelColumns = append(modelColumns, f.DBName)
		}
	}
	assert.ElementsMatch(t, modelColumns, companyColumns)

	var c models.Company
	dest := companyDest(&c)
	require.Len(t, dest, len(companyColumns))
	for i, name := range companyColumns {
		f := sch.LookUpField(name)
		require.NotNil(t, f, name)
		field := f.ReflectValueOf(context.Background(), reflect.ValueOf(&c).Elem()).Addr().Interface()
		if e, ok := dest[i].(emptyIfNull); ok {
			assert.Same(t, field, e.s, "destination %d is the field of %s", i, name)
			continue
		}
		assert.Same(t, field, dest[i], "destination %d is the field of %s", i, name)
	}
}
